"""The LLM layer: DSPy signatures, LM configuration and the planner the graph calls.

Importing this package is cheap; DSPy and LiteLLM load on a planner's first use.
"""

import os

# LiteLLM fetches its model-cost map from GitHub when imported unless told not to. Set it here,
# before any module of this package can import DSPy (and so LiteLLM): no network at startup, no
# multi-second retries offline. The bundled map is what the planner's capability checks read.
os.environ.setdefault("LITELLM_LOCAL_MODEL_COST_MAP", "True")

from sidecar.llm.config import describe_how_to_configure, resolve_lm_config
from sidecar.llm.planner import DspyPlanner, aclose_model_clients

__all__ = [
    "DspyPlanner",
    "aclose_model_clients",
    "describe_how_to_configure",
    "resolve_lm_config",
]
