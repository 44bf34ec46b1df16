"""Strata's Qt widgets: the timeline, the stats panel, the histogram (no files, no SQL)."""
