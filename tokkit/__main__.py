"""`python -m tokkit ...`: the same as the `tokkit` command."""
from tokkit.cli import main

main()
