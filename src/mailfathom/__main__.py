"""`python -m mailfathom`: the same command line as the `mailfathom` console script."""

from mailfathom.entrypoints.cli.main import main

if __name__ == "__main__":
    main()
