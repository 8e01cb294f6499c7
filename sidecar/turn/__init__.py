"""One turn's vocabulary, shared by the graph, the plans and the context: its typed state, the
events it emits and the questions it asks the author."""
