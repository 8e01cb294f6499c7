"""One small module per method area; each handler is a registered function."""
