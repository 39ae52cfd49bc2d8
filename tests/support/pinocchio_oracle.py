"""Helpers that run Pinocchio on the same URDF as artic and map its quantities into artic's dof order."""

from __future__ import annotations

import numpy as np

from artic.math.np_spatial import quat_rotate, quat_to_matrix


def pinocchio_model(path, floating: bool):
    import pinocchio as pin

    if floating:
        return pin.buildModelFromUrdf(str(path), pin.JointModelFreeFlyer())
    return pin.buildModelFromUrdf(str(path))


class PinMap:
    """Maps artic's generalized vectors (root COM linear, angular when floating; dofs in cache order) to
    Pinocchio's (free-flyer body-frame velocity of the root frame; joints in its own order)."""

    def __init__(self, pmodel, art):
        self.pm = pmodel
        names = art.dof_names
        self.n = len(names)
        self.idx_v = np.zeros(self.n, int)  # artic dof -> pinocchio v index
        self.joint_q = []  # (artic dof, pinocchio idx_q, nq)
        self.floating = pmodel.joints[1].shortname() == "JointModelFreeFlyer"
        for jid in range(1, pmodel.njoints):
            jn = pmodel.names[jid]
            if jn not in names:
                continue
            d = names.index(jn)
            self.idx_v[d] = pmodel.joints[jid].idx_v
            self.joint_q.append((d, pmodel.joints[jid].idx_q, pmodel.joints[jid].nq))
        assert len(self.joint_q) == self.n, "every artic dof must match a Pinocchio joint by name"

    def q(self, q_artic, root_pose=None):
        out = np.zeros(self.pm.nq)
        if self.floating:
            out[:3] = root_pose[:3]
            out[3:7] = root_pose[3:7]
        for d, iq, nq in self.joint_q:
            if nq == 1:
                out[iq] = q_artic[d]
            else:
                out[iq], out[iq + 1] = np.cos(q_artic[d]), np.sin(q_artic[d])
        return out

    def t_matrix(self, root_pose, root_com_local):
        """T with v_pin = T v_artic (a configuration-dependent linear map)."""
        nv = self.pm.nv
        t = np.zeros((nv, len(self.idx_v) + (6 if self.floating else 0)))
        off = 6 if self.floating else 0
        for d in range(self.n):
            t[self.idx_v[d], off + d] = 1.0
        if self.floating:
            r = quat_to_matrix(root_pose[3:7])
            c = r @ root_com_local
            skew_c = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
            # v_local = R^T (v_c - w x c) = R^T v_c + R^T [c] w ; w_local = R^T w
            t[:3, :3] = r.T
            t[:3, 3:6] = r.T @ skew_c
            t[3:6, 3:6] = r.T
        return t

    def tdot_v(self, root_pose, v_artic):
        """(d/dt T) v: only the floating root's linear part, -R^T (w x v_c)."""
        out = np.zeros(self.pm.nv)
        if self.floating:
            r = quat_to_matrix(root_pose[3:7])
            out[:3] = -r.T @ np.cross(v_artic[3:6], v_artic[:3])
        return out


__all__ = ["PinMap", "pinocchio_model", "quat_rotate"]
