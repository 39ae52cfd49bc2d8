"""Host-side descriptions (articulations, links, joints, rigid actors, shapes, body joints) and the URDF and MJCF
importers."""
