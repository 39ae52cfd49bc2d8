"""artic with other libraries: a Gymnasium vector env (gym_env.py, `pip install -e ".[gym]"`) and zero-copy
PyTorch views of the state and control arrays (torch_views.py, `pip install -e ".[torch]"`). docs/interop.md."""

from __future__ import annotations
