"""JSON-RPC over stdio: framing, dispatch, cancellation, error mapping."""
