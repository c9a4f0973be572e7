"""Memory products reached over the network (Hindsight, ...): their HTTP clients and adapters."""
