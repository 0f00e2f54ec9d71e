"""``parterre`` subcommand groups, one module each with ``register(subparsers)``."""
