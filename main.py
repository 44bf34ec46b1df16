"""Strata: a timeline viewer for NVIDIA Nsight Systems reports. See README.md."""

import sys

from strata.launch import main

if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
