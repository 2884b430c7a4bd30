"""The ``iostack`` console command: runs the Rust command line in-process."""

import sys

from iostack import _core


def main() -> None:
    sys.exit(_core.main(["iostack", *sys.argv[1:]]))


if __name__ == "__main__":
    main()
