"""A misspelled attribute is refused (issue 27, "never silent"): Python would create `link.masss` and the link would
keep its old mass, silently. Every description class, the materials and shapes, and the scene refuse a public
attribute they do not have, with the closest names; what they have is set as before."""

from __future__ import annotations

import copy
import pickle

import pytest

import artic
from artic import Transform


def _arm():
    art = artic.Articulation("arm")
    root = art.create_link(None, Transform(), "base")
    return art, art.create_link(root, Transform(), "upper")


def _cases():
    art, link = _arm()
    body = artic.RigidDynamic(Transform(), "box")
    hinge = artic.HingeJoint(body, None, Transform(), name="hinge")
    return [
        (link, "masss", r"link 'upper': has no attribute 'masss'.*did you mean 'mass'"),
        (link.inbound_joint, "max_joint_velocty", r"joint 'upper'.*did you mean set_max_joint_velocity\(\.\.\.\)"),
        (art, "sleep_treshold", r"articulation 'arm'.*did you mean 'sleep_threshold'"),
        (body, "linear_dampng", r"has no attribute 'linear_dampng'"),
        (hinge, "compliance", r"hinge joint 'hinge'.*did you mean set_compliance\(\.\.\.\)"),
        (artic.Box((0.1, 0.1, 0.1)), "contact_ofset", r"unnamed box.*did you mean 'contact_offset'"),
        (artic.Material(), "static_fricton", r"material.*did you mean 'static_friction'"),
        (artic.Drive(1.0, 1.0), "stifness", r"drive.*did you mean 'stiffness'"),
        (artic.Scene(1), "solver", r"scene: has no attribute 'solver'"),
    ]


@pytest.mark.parametrize("case", range(9))
def test_a_misspelled_attribute_is_refused_with_the_closest_names(case):
    obj, name, message = _cases()[case]
    with pytest.raises(artic.ValidationError, match=message):
        setattr(obj, name, 1.0)
    assert name not in vars(obj)


def test_known_attributes_set_copy_and_pickle_as_before():
    """Identity: attributes the classes have are set and read back; copies and pickles (which fill __dict__
    without __setattr__) keep every attribute; private names stay free for artic's own use."""
    art, link = _arm()
    link.mass = 2.5
    link.linear_damping = 0.3
    art.sleep_threshold = 0.0
    box = artic.Box((0.1, 0.2, 0.3))
    box.contact_offset = 0.01
    assert (link.mass, link.linear_damping, art.sleep_threshold, box.contact_offset) == (2.5, 0.3, 0.0, 0.01)
    for clone in (copy.deepcopy(art), pickle.loads(pickle.dumps(art))):
        assert clone.get_link("upper").mass == 2.5 and clone.sleep_threshold == 0.0
    link._scratch = 1  # private: not checked
    with pytest.raises(artic.ValidationError):
        clone.get_link("upper").masss = 1.0


def test_unknown_joint_or_link_names_list_the_names():
    """get_joint / get_link with a misspelled name say which names there are."""
    from artic.assets import model_path

    art = artic.load_urdf(model_path("arm6"))
    with pytest.raises(artic.ValidationError, match=r"no joint named 'elbw' \(joints: shoulder_pan, .*elbow"):
        art.get_joint("elbw")
    with pytest.raises(artic.ValidationError, match=r"no link named 'bse' \(links: .*"):
        art.get_link("bse")
