"""OpenSim 4.6 inverse kinematics as an oracle for artic's marker tracking (artic.mocap): a SegmentModel rebuilt as
an OpenSim model (same bodies, ball joints at the same anchors, markers at the same attachments) and OpenSim's
InverseKinematicsSolver run on the same marker trajectories, its answer read back as artic's segment poses.

Import this module only after pytest.importorskip("opensim"): OpenSim is an optional test dependency.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import opensim as osim
from numpy.typing import ArrayLike

from artic.mocap.markers import MarkerSet
from artic.mocap.segments import SegmentModel

GRAVITY = (0.0, 0.0, -9.81)

# OpenSim's logger may open an "opensim.log" file sink in the working directory; a test run must leave no files.
osim.Logger.removeFileSink()


def _vec3(v: ArrayLike) -> osim.Vec3:
    x, y, z = (float(c) for c in np.asarray(v, float).reshape(3))
    return osim.Vec3(x, y, z)


def build_opensim_model(
    model: SegmentModel, names: Sequence[str], segments: Sequence[str], attachments: ArrayLike
) -> osim.Model:
    """An OpenSim model of `model` with one marker per name, on the segment of the same index at its attachment
    (n, 3) [m, segment frame]. Bodies are added in segment order (opensim_ik returns poses in that order); the
    root hangs from ground by a FreeJoint whose default translation is model.root_position, every other segment from
    its parent by a BallJoint, so that the default pose is the reference pose."""
    names, segments = list(names), list(segments)
    att = np.asarray(attachments, float)
    if len(segments) != len(names) or att.shape != (len(names), 3):
        raise ValueError(
            f"build_opensim_model: {len(names)} names need as many segments and (n, 3) attachments, "
            f"got {len(segments)} segments and attachments of shape {att.shape}"
        )
    m = osim.Model()
    m.setName(model.name)
    m.setGravity(_vec3(GRAVITY))
    zero = osim.Vec3(0.0)
    bodies = {}
    for s in model.segments:
        i = s.inertia
        # OpenSim's inertia is about the body origin in body axes; the origin is put at the COM (mass centre zero),
        # so it is artic's inertia about the COM unchanged. Inertia(xx, yy, zz, xy, xz, yz).
        inertia = osim.Inertia(i[0, 0], i[1, 1], i[2, 2], i[0, 1], i[0, 2], i[1, 2])
        body = osim.Body(s.name, s.mass, zero, inertia)
        m.addBody(body)
        bodies[s.name] = body
        if s.parent is None:
            joint = osim.FreeJoint(f"{s.name}_free", m.getGround(), zero, zero, body, zero, zero)
            # coordinates 0-2 are body-fixed X-Y-Z rotations, 3-5 the translation in ground: start at the reference
            # pose, so that the free joint's translation coordinates read as the root COM's world position
            for k in range(3):
                joint.upd_coordinates(3 + k).setDefaultValue(float(model.root_position[k]))
        else:
            # identity orientation in both joint frames: the ball's rotation is then R_parent^T R_child, the
            # rotation artic's relative_rotations measures
            joint = osim.BallJoint(
                f"{s.name}_ball",
                bodies[s.parent],
                _vec3(s.anchor_in_parent),
                zero,
                body,
                _vec3(s.anchor_in_child),
                zero,
            )
        m.addJoint(joint)
    for name, seg, a in zip(names, segments, att):
        if seg not in bodies:
            raise ValueError(f"build_opensim_model: marker '{name}' is on '{seg}', not a segment of '{model.name}'")
        m.addMarker(osim.Marker(name, bodies[seg], _vec3(a)))
    m.finalizeConnections()
    return m


def body_poses(osim_model: osim.Model, state: osim.State) -> np.ndarray:
    """(S, 7) pose (px, py, pz, qx, qy, qz, qw) of every body in the model's body set, world (ground) frame.

    Read from each body's transform rather than converted from coordinates: OpenSim's ball and free joint
    coordinates are body-fixed X-Y-Z Euler angles, artic's joint angles rotation vectors."""
    osim_model.realizePosition(state)
    bodies = osim_model.getBodySet()
    out = np.empty((bodies.getSize(), 7))
    for i in range(bodies.getSize()):
        x = bodies.get(i).getTransformInGround(state)
        q = x.R().convertRotationToQuaternion()  # SimTK order: w, x, y, z
        out[i, :3] = x.p().to_numpy()
        out[i, 3:] = (q.get(1), q.get(2), q.get(3), q.get(0))
    return out


def _marker_weights(markers: MarkerSet, weights: Mapping[str, float] | ArrayLike | None) -> np.ndarray:
    if weights is None:
        return np.ones(markers.count)
    if isinstance(weights, Mapping):
        unknown = set(weights) - set(markers.names)
        if unknown:
            raise ValueError(f"opensim_ik: weights for unknown markers {sorted(unknown)}")
        return np.array([float(weights.get(n, 1.0)) for n in markers.names])
    w = np.asarray(weights, float)
    if w.shape != (markers.count,) or not np.all(np.isfinite(w)) or np.any(w < 0):
        raise ValueError(f"opensim_ik: weights must be {markers.count} finite values >= 0, got shape {w.shape}")
    return w


def _marker_table(markers: MarkerSet, times: np.ndarray) -> osim.TimeSeriesTableVec3:
    # Missing markers stay NaN: Simbody's marker assembly goal skips non-finite observations frame by frame,
    # which is what OpenSim's IK tool does with the gaps of a .trc file (read as NaN).
    table = osim.TimeSeriesTableVec3()
    table.setColumnLabels(list(markers.names))
    for t, frame in zip(times, markers.positions):
        row = osim.RowVectorVec3(markers.count)
        for k, p in enumerate(frame):
            row[k] = _vec3(p)
        table.appendRow(float(t), row)
    # MarkersReference scales the table by its "Units" (a table in mm would shrink 1000-fold): declare metres
    table.addTableMetaDataString("Units", "m")
    return table


def opensim_ik(
    osim_model: osim.Model,
    markers: MarkerSet,
    weights: Mapping[str, float] | ArrayLike | None = None,
    accuracy: float = 1e-8,
) -> np.ndarray:
    """(T, S, 7) body poses (COM position, quaternion xyzw; world), body-set order (segment order for
    build_opensim_model), from OpenSim's InverseKinematicsSolver on `markers`: per frame, the weighted
    least-squares marker fit with the joints held exactly (constraint weight infinite, as the IK tool does).
    `weights` per marker (a name -> weight mapping, missing names 1; or (n,)); NaN markers are left out of their
    frame. Frame 0 is assembled from the default (reference) pose, each later frame tracked from the previous one.
    `accuracy` is the assembler's tolerance: the IK tool's default 1e-5 leaves up to ~1 deg of joint-angle error on
    the synthetic humanoid with exact markers, 1e-8 about 2e-3 deg, for 3x the time."""
    w = _marker_weights(markers, weights)
    known = {osim_model.getMarkerSet().get(i).getName() for i in range(osim_model.getMarkerSet().getSize())}
    if set(markers.names) - known:
        raise ValueError(f"opensim_ik: markers not in the model: {sorted(set(markers.names) - known)}")
    # the state's time picks the reference row: use the very same floats in the table and in the loop
    times = np.arange(markers.frames) / markers.rate
    weight_set = osim.SetMarkerWeights()
    for name, wk in zip(markers.names, w):
        weight_set.cloneAndAppend(osim.MarkerWeight(name, float(wk)))
    reference = osim.MarkersReference(_marker_table(markers, times), weight_set)
    state = osim_model.initSystem()
    solver = osim.InverseKinematicsSolver(osim_model, reference, osim.SimTKArrayCoordinateReference())
    solver.setAccuracy(accuracy)
    poses = np.empty((markers.frames, osim_model.getBodySet().getSize(), 7))
    for t, time in enumerate(times):
        state.setTime(float(time))
        if t == 0:
            solver.assemble(state)
        else:
            solver.track(state)
        poses[t] = body_poses(osim_model, state)
    return poses
