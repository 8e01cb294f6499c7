"""One module per node of the main graph."""
