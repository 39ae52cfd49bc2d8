"""Tree dynamics: kinematics, CRBA, RNEA, ABA, Jacobian, COM and centroidal momentum, one module each."""
