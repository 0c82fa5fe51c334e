"""`python -m tokkit.cli ...`: the same as the `tokkit` command."""
from tokkit.cli import main

main()
