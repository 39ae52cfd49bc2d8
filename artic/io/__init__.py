"""Files in: URDF (urdf.py) and MJCF (mjcf/) importers that turn robot files into descriptions, and the readers
below them (xml_values.py: checked numbers from XML; mesh_file.py: triangle meshes, which the description layer's
Mesh shape reads when it is made)."""

from __future__ import annotations
