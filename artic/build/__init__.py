"""Host-side descriptions: articulations, links, joints, shapes, and the URDF importer."""
