"""Repeated top-level MJCF sections (issue 25, item 1), checked against MuJoCo: a scene file that includes a robot
and adds its own <worldbody>, <actuator>, <default> or <compiler> is read whole, as MuJoCo reads it. Before, only
the first of each was read, silently: the scene lost its floor and its actuators, and a later <compiler
angle="radian"> was lost (ranges 57x too small)."""

from __future__ import annotations

import warnings

import numpy as np
import pytest

import artic
from tests.support.models import mjcf_with_mujoco

mujoco = pytest.importorskip("mujoco")

# the file: two worldbodies, two actuator sections, a compiler between them
SCATTERED = """<mujoco><worldbody><body name="arm"><joint name="j" axis="0 1 0" range="-1 1"/>
<geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/></body></worldbody>
<actuator><motor joint="j"/></actuator><compiler angle="radian"/>
<worldbody><geom name="floor" type="plane" size="1 1 .1"/></worldbody>
<actuator><position joint="j" kp="10"/></actuator></mujoco>"""

# two defaults (main-class settings merged, a class defined after its use) and two compilers (the last one wins)
DEFAULTS = """<mujoco><compiler angle="radian"/>
<default><joint damping="1"/><default class="red"><geom density="500"/></default></default>
<worldbody><body name="arm"><joint name="j" axis="0 1 0" range="-1 1"/>
<geom class="wide" type="capsule" fromto="0 0 0 .3 0 0"/></body></worldbody>
<compiler angle="degree"/>
<default><joint armature="0.5"/><default class="wide"><geom size=".05"/></default></default>
</mujoco>"""

ROBOT = """<mujoco model="robot"><compiler angle="radian"/>
<default><joint damping="0.2"/></default>
<worldbody><body name="base" pos="0 0 0.5"><freejoint/><geom type="box" size=".1 .1 .1"/>
<body name="arm" pos="0.1 0 0"><joint name="hinge" axis="0 1 0" range="-1.5 1.5"/>
<geom type="capsule" fromto="0 0 0 .3 0 0" size=".03"/></body></body></worldbody>
<actuator><motor name="m" joint="hinge" gear="2"/></actuator></mujoco>"""

SCENE = """<mujoco model="scene"><include file="robot.xml"/>
<worldbody><light pos="0 0 3"/><geom name="floor" type="plane" size="5 5 .1"/>
<body name="table" pos="1 0 0.2"><geom type="box" size=".3 .3 .02"/></body></worldbody>
<actuator><position name="p" joint="hinge" kp="50"/></actuator></mujoco>"""


def _both(tmp_path, text, name="model.xml"):
    path = tmp_path / name
    path.write_text(text)
    return mjcf_with_mujoco(path)


def _hinge(model, name):
    for art in model.articulations:
        for link in art.get_links()[1:]:
            if link.inbound_joint.name == name:
                return link.inbound_joint
    raise KeyError(name)


def _shape_count(model):
    return sum(len(s.shapes) for s in model.statics) + sum(
        len(link.shapes) for art in model.articulations for link in art.get_links()
    )


def test_every_worldbody_and_actuator_section_is_read(tmp_path):
    """The issue's file: MuJoCo has the floor, two actuators and a range of +-1 rad (the compiler given between
    the sections applies to the whole model); so does artic."""
    model, mm = _both(tmp_path, SCATTERED)
    assert _shape_count(model) == mm.ngeom == 2
    assert [a.kind for a in model.actuators] == ["motor", "position"] and mm.nu == 2
    j = _hinge(model, "j")
    limit = j.get_limit_params(j.dof_axes()[0])
    np.testing.assert_allclose([limit.low, limit.high], mm.jnt_range[0], atol=1e-12)
    np.testing.assert_allclose(mm.jnt_range[0], [-1.0, 1.0])


def test_defaults_merge_and_the_last_compiler_wins(tmp_path):
    """Two <default> sections: the main class takes both (damping 1 and armature 0.5), a class defined in the
    second serves a geom before it; the second <compiler> (degrees) wins for the whole model. Each as MuJoCo."""
    model, mm = _both(tmp_path, DEFAULTS)
    j = _hinge(model, "j")
    ax = j.dof_axes()[0]
    limit = j.get_limit_params(ax)
    np.testing.assert_allclose([limit.low, limit.high], mm.jnt_range[0], atol=1e-12)
    assert limit.high == pytest.approx(np.radians(1.0))
    assert j.get_passive_params(ax).damping == pytest.approx(mm.dof_damping[0]) == 1.0
    assert j.get_armature(ax) == pytest.approx(mm.dof_armature[0]) == 0.5
    link = model.articulations[0].get_link("arm")
    assert link.mass == pytest.approx(mm.body_mass[1], rel=1e-9)  # the 0.05 m radius of class 'wide'


def test_a_scene_file_including_a_robot_keeps_its_own_sections(tmp_path):
    """A scene file as shipped with robot models: it includes the robot file and adds a floor, a table and an
    actuator. MuJoCo: 4 geoms (box, capsule, floor, table), 2 actuators, the robot's damping; artic the same (the
    table a fixed-base articulation of its own), and the robot lands on the floor."""
    (tmp_path / "robot.xml").write_text(ROBOT)
    model, mm = _both(tmp_path, SCENE, "scene.xml")
    assert _shape_count(model) == mm.ngeom == 4
    assert sorted(a.name for a in model.actuators) == ["m", "p"] and mm.nu == 2
    hinge = _hinge(model, "hinge")
    ax = hinge.dof_axes()[0]
    limit = hinge.get_limit_params(ax)
    np.testing.assert_allclose([limit.low, limit.high], mm.jnt_range[1], atol=1e-12)
    assert hinge.get_passive_params(ax).damping == pytest.approx(0.2)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    for _ in range(200):
        scene.step(model.timestep)
    robot = next(a for a in model.articulations if a.name != "table")
    z = scene.get_link_poses(robot)[0, 0, 2]
    assert z > 0.05  # it lands on the floor instead of falling through where the floor was lost


def test_one_warning_per_kind_not_per_element(tmp_path):
    """A hand's 64 ranged fixed tendons gave 64 warnings, its 20 force-limited servos on damped joints 20 more
    (issue 25, item 8). Each kind is now said once, for its first element, with how many others there are and
    the next names. (The ranges are dropped with soft constraints off; on, they are the tendons' soft limits. A
    joint's damper no longer shares the servo's drive, so the servos here have asymmetric ranges, which the
    drive's symmetric force limit approximates.)"""
    joints = (
        "".join(
            f'<body name="b{i}" pos="0.1 0 0"><joint name="j{i}" axis="0 1 0" damping="0.1"/>'
            '<geom type="sphere" size=".02"/>'
            for i in range(8)
        )
        + "</body>" * 8
    )
    tendons = "".join(f'<fixed name="t{i}" range="-0.1 0.1"><joint joint="j{i}" coef="1"/></fixed>' for i in range(8))
    servos = "".join(f'<position name="s{i}" joint="j{i}" kp="5" forcerange="-1 2"/>' for i in range(8))
    text = f"<mujoco><worldbody>{joints}</worldbody><tendon>{tendons}</tendon><actuator>{servos}</actuator></mujoco>"
    path = tmp_path / "hand.xml"
    path.write_text(text)
    with warnings.catch_warnings(record=True) as record:
        warnings.simplefilter("always")
        artic.load_mjcf(path, soft_constraints=False)
    said = [str(w.message) for w in record]
    ranges = [m for m in said if "range='-0.1 0.1' dropped" in m]
    forces = [m for m in said if "forcerange is applied only approximately" in m]
    assert len(ranges) == 1 and "fixed 't0'" in ranges[0] and "(and 7 more like it: fixed 't1'" in ranges[0]
    assert len(forces) == 1 and "position 's0'" in forces[0] and "(and 7 more like it: position 's1'" in forces[0]
    assert len(said) <= 4


def test_an_included_file_may_be_a_mujocoinclude(tmp_path):
    """Files written for MuJoCo 2 (gymnasium-robotics' Adroit hand and kitchen) give their included parts the top
    element <mujocoinclude>; MuJoCo 4 still reads them, and so does artic (it refused them)."""
    (tmp_path / "parts.xml").write_text(
        '<mujocoinclude><body name="ball" pos="0 0 1"><freejoint/><geom type="sphere" size=".1"/></body>'
        "</mujocoinclude>"
    )
    model, mm = _both(tmp_path, '<mujoco><worldbody><include file="parts.xml"/></worldbody></mujoco>')
    assert [a.name for a in model.articulations] == ["ball"] and mm.nbody == 2
    assert model.articulations[0].get_link("ball").mass == pytest.approx(mm.body_mass[1], rel=1e-9)


FRAMES = """<mujoco><compiler angle="radian"/>
<default><default class="tilted"><geom euler="0.3 0 0"/></default></default>
<worldbody>
<frame pos="0.5 0 0.2" euler="0 0 1.5707963">
  <geom name="slab" type="box" size=".2 .1 .02" pos="0 0.3 0"/>
  <frame pos="0 0 0.4" euler="0.4 0 0" childclass="tilted">
    <body name="arm" pos="0.1 0 0">
      <joint name="hinge" axis="0 1 0" pos="0 0 0.05"/>
      <geom name="rod" type="capsule" fromto="0 0 0 .3 0 0" size=".03"/>
      <frame pos="0.3 0 0" euler="0 0.5 0"><geom name="tip" type="box" size=".05 .02 .04" quat="1 0 0 0"/>
        <body name="hand" pos="0.1 0 0"><joint name="wrist" axis="1 0 0"/><geom name="palm" size=".04"/></body>
      </frame>
    </body>
  </frame>
</frame>
</worldbody></mujoco>"""


def test_frames_are_expanded_as_mujoco_compiles_them(tmp_path):
    """<frame> (refused before): nested frames with positions, orientations and a childclass, holding a static
    geom, a body, a fromto capsule, a geom whose own quat replaces its class's euler, and a joint with a pos. At
    qpos0 and at other joint positions every body sits where MuJoCo puts it (1e-6 m, quaternions equal up to sign),
    which checks the joints' anchors and axes too, and the bodies' masses and inertias (the geoms' poses) agree."""
    from artic.description.body_joints import description_pose

    model, mm = _both(tmp_path, FRAMES)
    md = mujoco.MjData(mm)
    art = model.articulations[0]
    joints = [_hinge(model, n) for n in ("hinge", "wrist")]
    for qpos in ([0.0, 0.0], [0.4, -0.7], [-1.2, 2.0]):
        md.qpos[:] = qpos
        mujoco.mj_kinematics(mm, md)
        for j, q in zip(joints, qpos):
            j.set_joint_position(j.dof_axes()[0], q)
        for b in range(1, mm.nbody):
            pose = description_pose(art.get_link(mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b)))
            np.testing.assert_allclose(pose.p, md.xpos[b], atol=1e-6)
            assert abs(abs(np.dot(pose.q, np.roll(md.xquat[b], -1))) - 1.0) < 1e-6
    for b in range(1, mm.nbody):
        link = art.get_link(mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b))
        assert link.mass == pytest.approx(mm.body_mass[b], rel=1e-6)
        np.testing.assert_allclose(sorted(link.inertia), sorted(mm.body_inertia[b]), rtol=1e-5)
        np.testing.assert_allclose(link.cmass_local_pose.p, mm.body_ipos[b], atol=1e-6)
    static = model.statics[0].shapes[0]
    np.testing.assert_allclose(static.local_pose.p, mm.geom_pos[0], atol=1e-6)


def test_an_elements_own_orientation_replaces_its_classs(tmp_path):
    """A class giving geoms an euler and a geom giving its own quat: MuJoCo takes the geom's (artic refused the
    pair as two orientations); the body's inertia, which the box's orientation sets, agrees."""
    model, mm = _both(
        tmp_path,
        '<mujoco><default><default class="c"><geom euler="0 0 30"/></default></default><worldbody>'
        '<body name="b"><freejoint/><geom class="c" type="box" size=".3 .1 .05" quat="0.9 0 0.4359 0"/>'
        "</body></worldbody></mujoco>",
    )
    from artic.math.np_spatial import quat_to_matrix

    link = model.articulations[0].get_link("b")
    r = quat_to_matrix(link.cmass_local_pose.q)
    r_mj = quat_to_matrix(np.roll(mm.body_iquat[1], -1))
    tensor, tensor_mj = r @ np.diag(link.inertia) @ r.T, r_mj @ np.diag(mm.body_inertia[1]) @ r_mj.T
    np.testing.assert_allclose(tensor, tensor_mj, atol=1e-9 * np.abs(tensor_mj).max())
    assert abs(tensor_mj[0, 2]) > 1e-3 * np.abs(tensor_mj).max()  # the geom's own tilt about y shows


@pytest.mark.parametrize("top_level", [False, True], ids=["in-include-folder", "also-at-top"])
def test_a_mesh_named_in_an_included_file_is_found_where_mujoco_finds_it(tmp_path, top_level):
    """An included file in a sub-folder names mesh 'box.obj' lying beside it: MuJoCo looks under the main file's
    folder first and then under the included file's folder (artic refused it, looking only at the first); with a
    different box at the top, MuJoCo takes that one, and so does artic (the masses tell which box was read)."""
    import trimesh

    (tmp_path / "sub").mkdir()
    trimesh.creation.box((0.1, 0.2, 0.3)).export(tmp_path / "sub" / "box.obj")
    if top_level:
        trimesh.creation.box((0.1, 0.2, 0.5)).export(tmp_path / "box.obj")
    (tmp_path / "sub" / "robot.xml").write_text(
        '<mujoco><asset><mesh name="box" file="box.obj"/></asset><worldbody><body name="b" pos="0 0 1">'
        '<freejoint/><geom type="mesh" mesh="box"/></body></worldbody></mujoco>'
    )
    model, mm = _both(tmp_path, '<mujoco><include file="sub/robot.xml"/></mujoco>')
    link = model.articulations[0].get_link("b")
    assert link.mass == pytest.approx(mm.body_mass[1], rel=1e-6)
    assert link.mass == pytest.approx(1000.0 * 0.1 * 0.2 * (0.5 if top_level else 0.3), rel=1e-6)


@pytest.mark.parametrize("fitaabb", ["false", "true"])
@pytest.mark.parametrize("kind", ["sphere", "capsule", "cylinder", "box", "ellipsoid"])
def test_a_primitive_fitted_to_a_mesh_is_mujocos(tmp_path, kind, fitaabb):
    """<geom type="capsule" mesh="..."> (refused before): MuJoCo fits the primitive to the mesh, in the mesh's
    principal frame, to its equivalent-inertia box or (fitaabb) its bounding box there, scaled by fitscale. On a
    turned, off-centre cone (so that its COM, bounding-box centre and principal axes all differ from the file's)
    the body's mass, COM and inertia tensor, which the fitted size and frame set, equal MuJoCo's."""
    import trimesh

    from artic.math.np_spatial import quat_to_matrix

    cone = trimesh.creation.cone(radius=0.1, height=0.5, sections=24)
    cone.apply_scale((1.0, 0.6, 1.0))
    cone.apply_transform(trimesh.transformations.rotation_matrix(0.7, (1, 1, 0)))
    cone.apply_translation((0.2, -0.1, 0.05))
    cone.export(tmp_path / "cone.obj")
    model, mm = _both(
        tmp_path,
        f'<mujoco><compiler fitaabb="{fitaabb}"/><asset><mesh name="m" file="cone.obj"/></asset><worldbody>'
        f'<body name="b"><freejoint/><geom type="{kind}" mesh="m" fitscale="1.2" pos="0 0 .3" euler="0 30 0"/>'
        "</body></worldbody></mujoco>",
    )
    link = model.articulations[0].get_link("b")
    assert link.mass == pytest.approx(mm.body_mass[1], rel=1e-5)
    np.testing.assert_allclose(link.cmass_local_pose.p, mm.body_ipos[1], atol=1e-6)
    r, r_mj = quat_to_matrix(link.cmass_local_pose.q), quat_to_matrix(np.roll(mm.body_iquat[1], -1))
    tensor, tensor_mj = r @ np.diag(link.inertia) @ r.T, r_mj @ np.diag(mm.body_inertia[1]) @ r_mj.T
    np.testing.assert_allclose(tensor, tensor_mj, atol=1e-5 * np.abs(tensor_mj).max())


REPLICATE = """<mujoco><compiler angle="degree"/><worldbody>
<replicate count="3" offset="0 0.6 0" euler="0 0 20" sep="-">
  <replicate count="2" offset="0.3 0 0">
    <body name="leg" pos="0.1 0 0.5"><joint name="hip" axis="0 1 0"/>
      <geom name="thigh" type="capsule" fromto="0 0 0 0 0 -0.3" size=".03"/></body>
  </replicate>
</replicate>
</worldbody></mujoco>"""


def test_replicate_copies_as_mujoco_does(tmp_path):
    """<replicate> (refused before), nested, with an offset, an euler turn per copy and a separator: the same
    bodies and joints under the same names (inner index first, zero-padded), at MuJoCo's poses at qpos0 and with
    the hips turned (so the copied joints' axes are checked too)."""
    from artic.description.body_joints import description_pose

    model, mm = _both(tmp_path, REPLICATE)
    names = [mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_BODY, b) for b in range(1, mm.nbody)]
    assert sorted(a.name for a in model.articulations) == sorted(names)
    md = mujoco.MjData(mm)
    md.qpos[:] = np.linspace(-1.0, 1.0, mm.nq)
    mujoco.mj_kinematics(mm, md)
    for b, name in enumerate(names, start=1):
        art = next(a for a in model.articulations if a.name == name)
        jname = mujoco.mj_id2name(mm, mujoco.mjtObj.mjOBJ_JOINT, mm.body_jntadr[b])
        joint = _hinge(model, jname)
        joint.set_joint_position(joint.dof_axes()[0], md.qpos[mm.jnt_qposadr[mm.body_jntadr[b]]])
        pose = description_pose(art.get_link(name))
        np.testing.assert_allclose(pose.p, md.xpos[b], atol=1e-9)
        assert abs(abs(np.dot(pose.q, np.roll(md.xquat[b], -1))) - 1.0) < 1e-9


REPLICATE_SECTIONS = """<mujoco><worldbody>
<body name="post"><joint name="swivel" axis="0 0 1"/><geom size=".05"/></body>
<replicate count="3" offset="0.5 0 0" sep="-">
  <body name="leg" pos="0 0 1"><joint name="hip" axis="0 1 0"/><geom type="capsule" fromto="0 0 0 0 0 -.3" size=".03"/>
    <body name="shin" pos="0 0 -.3"><joint name="knee" axis="0 1 0"/>
      <geom type="capsule" fromto="0 0 0 0 0 -.3" size=".03"/></body></body>
</replicate></worldbody>
<tendon><fixed name="sum"><joint joint="hip" coef="1"/><joint joint="knee" coef=".5"/></fixed></tendon>
<actuator><motor name="turn" joint="swivel"/><position name="servo" joint="hip" kp="5"/>
  <motor name="pull" tendon="sum"/><motor name="turn2" joint="swivel" gear="2"/></actuator>
<equality><connect body1="leg" body2="post" anchor="0 0 0"/><joint joint1="knee" joint2="hip"/></equality>
<contact><exclude body1="leg" body2="shin"/></contact>
</mujoco>"""


def test_replicate_copies_the_elements_that_name_its_contents_as_mujoco_does(tmp_path):
    """The actuators, tendons, equalities and excludes that name something inside a <replicate> are copied with it
    (names suffixed, references inside suffixed, references outside kept), after the section's other elements and
    copy by copy, as MuJoCo 4 compiles them (refused before: "names no joint"); an equality between a replicated
    body and one outside is left out as by MuJoCo, with a warning. Also the path by which mujoco_warp's
    n_humanoid.xml (an <attach> inside a <replicate>) lost its actuators."""
    path = tmp_path / "model.xml"
    path.write_text(REPLICATE_SECTIONS)
    with pytest.warns(RuntimeWarning, match=r"1 equality constraint\(s\) between a replicated element"):
        warnings.simplefilter("ignore", UserWarning)
        model = artic.load_mjcf(path)
    mm = mujoco.MjModel.from_xml_path(str(path))
    name = lambda kind, i: mujoco.mj_id2name(mm, kind, i)  # noqa: E731
    assert [a.name for a in model.actuators] == [name(mujoco.mjtObj.mjOBJ_ACTUATOR, i) for i in range(mm.nu)]
    for a, i in zip(model.actuators, range(mm.nu)):
        kind = mujoco.mjtObj.mjOBJ_TENDON if a.tendon is not None else mujoco.mjtObj.mjOBJ_JOINT
        assert (a.tendon or a.joint) == name(kind, mm.actuator_trnid[i, 0])
    assert mm.neq == 3 and mm.nexclude == 3  # the joint equality copied, the connect not; the exclude copied
    assert [a.name for a in model.actuators][:2] == ["turn", "turn2"]  # the others first, as MuJoCo puts them


_ARM = """<mujoco model="arm"><compiler angle="degree" eulerseq="zyx" meshdir="parts"/>
  <default><geom contype="0" conaffinity="0"/>
    <default class="link"><geom type="capsule" size="0.03"/><joint damping="0.5" range="-60 45"/>
    <position kp="12" ctrlrange="-1 1"/></default></default>
  <asset><mesh name="pad" file="pad.obj"/></asset>
  <worldbody><body name="base" pos="0 0 0.1" euler="30 0 0"><geom class="link" fromto="0 0 0 0 0 0.2"/>
    <body name="upper" pos="0 0 0.2" euler="0 20 10" childclass="link"><joint name="shoulder" axis="0 1 0" ref="10"/>
      <geom fromto="0 0 0 0.3 0 0"/><geom type="mesh" mesh="pad" pos="0.3 0 0"/>
      <body name="fore" pos="0.3 0 0" axisangle="1 0 0 90">
        <joint name="elbow" type="slide" axis="1 0 0" range="-0.1 0.2"/>
        <geom fromto="0 0 0 0.2 0 0"/></body></body></body></worldbody>
  <tendon><fixed name="t"><joint joint="shoulder" coef="1"/></fixed></tendon>
  <actuator><position name="act" joint="shoulder" class="link"/><motor name="far" joint="nowhere"/></actuator>
</mujoco>"""
_SCENE = """<mujoco model="scene"><compiler angle="radian"/><asset><model name="arm" file="arm.xml"/></asset>
  <worldbody><geom type="plane" size="1 1 .1"/>
  <body name="mount" pos="0.5 0 0" euler="0 0 1.5"><attach model="arm" body="base" prefix="left_"/></body>
  <frame pos="-0.5 0 0"><attach model="arm" body="upper" prefix="r/"/></frame>
  <attach model="arm" prefix="w-"/></worldbody></mujoco>"""


def _write_arm(tmp_path):
    (tmp_path / "parts").mkdir()
    verts = [(x, y, z) for x in (0, 0.05) for y in (-0.03, 0.03) for z in (-0.01, 0.01)]
    faces = [(1, 3, 4, 2), (5, 6, 8, 7), (1, 2, 6, 5), (3, 7, 8, 4), (1, 5, 7, 3), (2, 4, 8, 6)]
    with open(tmp_path / "parts" / "pad.obj", "w") as f:
        f.writelines("v {} {} {}\n".format(*v) for v in verts)
        f.writelines(f"f {a} {b} {c}\nf {a} {c} {d}\n" for a, b, c, d in faces)
    (tmp_path / "arm.xml").write_text(_ARM.replace("<motor", "<motor").replace('joint="nowhere"', 'tendon="t"'))
    scene = tmp_path / "scene.xml"
    scene.write_text(_SCENE)
    return scene


def test_attach_is_expanded_as_mujoco_compiles_it(tmp_path):
    """Three attachments of one arm (degree angles, eulerseq zyx, a meshdir, classes for joints and actuators) into
    a radian scene: by body inside a turned body, by body inside a frame, and the whole worldbody. The bodies sit
    where MuJoCo puts them (to 1e-6 m), with MuJoCo's masses, joint ranges (a hinge's in radians, a slide's in
    metres), actuators and tendons; then, with gravity and the shoulders' position servos at ctrl 0.5 (contacts off),
    the bodies follow MuJoCo's for 0.5 s to 1e-3 m (the shoulders 1.1e-3 rad apart: artic's servo is an implicit
    drive, MuJoCo's force explicit)."""
    import mujoco

    scene_path = _write_arm(tmp_path)
    mm = mujoco.MjModel.from_xml_path(str(scene_path))
    md = mujoco.MjData(mm)
    mujoco.mj_forward(mm, md)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        model = artic.load_mjcf(scene_path)
    names = [mm.body(i).name for i in range(1, mm.nbody)]
    owner = {n: a for a in model.articulations for n in a.link_names}
    assert set(names) <= set(owner)
    assert [a.name for a in model.actuators] == [mm.actuator(i).name for i in range(mm.nu)]
    links = {link.name: link for a in model.articulations for link in a.get_links()}
    for i, n in enumerate(names, start=1):
        assert links[n].mass == pytest.approx(mm.body_mass[i], rel=1e-6, abs=1e-5), n
    for k in range(mm.njnt):
        j = next(
            link.inbound_joint
            for link in links.values()
            if link.inbound_joint and link.inbound_joint.name == mm.joint(k).name
        )
        (axis,) = j.dof_axes()
        lim = j.get_limit_params(axis)
        np.testing.assert_allclose([lim.low, lim.high], mm.jnt_range[k], atol=1e-9, err_msg=mm.joint(k).name)
    scene = artic.Scene(1, gravity=model.gravity)
    model.add_to(scene)
    control = artic.MjcfControl(model, scene)
    ctrl = np.array([0.5 if mm.actuator(i).name.endswith("act") else 0.0 for i in range(mm.nu)])
    md.ctrl[:] = ctrl
    control.set(ctrl[None])

    def poses():
        return np.array([scene.get_link_poses(owner[n])[0, owner[n].link_names.index(n), :3] for n in names])

    np.testing.assert_allclose(poses(), md.xpos[1:], atol=1e-6)
    for _ in range(250):
        mujoco.mj_step(mm, md)
        scene.step(mm.opt.timestep)
    mujoco.mj_kinematics(mm, md)
    assert np.abs(md.xpos[1:] - poses()).max() < 1e-3
    assert np.abs(md.qpos).max() > 0.05  # the arms moved


def test_attach_leaves_out_what_names_objects_outside_and_refuses_bad_names(tmp_path):
    """Attaching only the forearm leaves out the shoulder's actuator and tendon (their joint is not copied), with a
    warning counting them, as MuJoCo leaves them out; an <attach> naming no model or no body is an MjcfError."""
    import mujoco

    scene_path = _write_arm(tmp_path)
    scene_path.write_text(
        '<mujoco><asset><model name="arm" file="arm.xml"/></asset><worldbody>'
        '<attach model="arm" body="fore" prefix="f_"/></worldbody></mujoco>'
    )
    mm = mujoco.MjModel.from_xml_path(str(scene_path))
    with pytest.warns(RuntimeWarning, match="left out 3 actuator, tendon"):
        model = artic.load_mjcf(scene_path)
    assert len(model.actuators) == mm.nu == 0
    assert [link.name for a in model.articulations for link in a.get_links()][-1] == "f_fore"
    for bad, words in (('model="hand"', "names no <asset><model>"), ('model="arm" body="palm"', "has no such body")):
        scene_path.write_text(
            f'<mujoco><asset><model name="arm" file="arm.xml"/></asset><worldbody><attach {bad}/></worldbody></mujoco>'
        )
        with pytest.raises(artic.MjcfError, match=words):
            artic.load_mjcf(scene_path)
