"""One module per `supportbench` subcommand; each exposes `register(subparsers)`."""
