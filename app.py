"""supportbench workbench: `streamlit run app.py` (runs are read from $SUPPORTBENCH_RUNS or runs/).

The entry file only: the view table and the router are `pages/_router.py`."""

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # `pages` and `harness` from any cwd

from pages._router import main  # noqa: E402

if __name__ == "__main__":
    main()
