"""The orchestration's config sections, re-exported from the foundation (`duckflow/orchestra_config.py`).

`duckflow.config` holds these sections, and the foundation may not import a layer above it, so
they live below; this module keeps `duckflow.orchestra.settings` working for existing imports.
"""

from duckflow.orchestra_config import (
    CODE_ROUTES,
    ROUTES,
    ClassifierSettings,
    Coder3Config,
    LoopConfig,
    RoleModels,
    RoutingConfig,
    role_model_name,
)

__all__ = ["CODE_ROUTES", "ROUTES", "ClassifierSettings", "Coder3Config", "LoopConfig", "RoleModels",
           "RoutingConfig", "role_model_name"]
