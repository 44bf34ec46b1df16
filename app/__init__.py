"""Strata's Qt application shell and command line; wires analysis/ to viewer/."""
