"""pytest tests of models built in Python code: saltus.PlanarBuilder, saltus.SpatialBuilder and
Lagrangian models with Python callables for M, F and the constraint rows (saltus.Constraints)."""
import math
import os

import numpy as np
import pytest

import saltus

G = 9.81


def scene_path(*parts):
    return os.path.join(os.environ["SALTUS_SOURCE_DIR"], "examples", *parts)


def tight(model, integrator="dopri5"):
    opts = model.options
    opts.integrator = integrator
    opts.rtol, opts.atol = 1e-10, 1e-12
    return opts


def test_planar_builder_matches_the_scene_file():
    # examples/sets/scenes/pendulum_stop.yaml, item by item, with bodies by name and by index.
    b = saltus.PlanarBuilder()
    b.set_gravity([0, -9.81])
    link = b.add_body("link", mass=1, inertia=0.083333333333333333, position=[0.5, 0, 0])
    b.add_joint("pivot", "revolute", "ground", link, point_b=[-0.5, 0])
    b.add_contact("wall", "point_line", "ground", "link", point_a=[-0.3, 0], normal_a=[1, 0],
                  point_b=[0.5, 0], restitution=0.7)
    built = b.build()
    scene = saltus.Model.from_scene_file(scene_path("sets", "scenes", "pendulum_stop.yaml"))
    assert built.position_names == scene.position_names
    assert built.constraint_names == scene.constraint_names
    opts = scene.options
    runs = [saltus.Simulation(m, opts).run(1.5) for m in (built, scene)]
    (tb, rb), (ts, rs) = runs
    assert rb.ok and rs.ok
    impacts = [[e.t for e in tr.events if e.kind == saltus.EventKind.impact] for tr in (tb, ts)]
    assert len(impacts[0]) >= 1 and impacts[0] == impacts[1]
    # The same model and options: the same arithmetic, so equal trajectories (round-off margin).
    assert tb.q.shape == ts.q.shape
    assert np.max(np.abs(tb.q - ts.q)) < 1e-12


def test_spatial_builder_double_pendulum_moves_like_the_planar_one():
    # examples/spatial/double_pendulum.yaml built in Python; its motion stays in the xy plane
    # and equals the planar double pendulum with the same masses and z inertias.
    s = saltus.SpatialBuilder()
    s.set_gravity([0, -9.81, 0])
    s.add_body("bar1", mass=78, inertia=[0.0325, 104.01625, 104.01625], position=[2, 0, 0])
    s.add_body("bar2", mass=39, inertia=np.diag([13.008125, 0.01625, 13.008125]),
               position=[4, -1, 0])
    s.add_joint("O", "revolute", "ground", "bar1", point_b=[-2, 0, 0])
    s.add_joint("A", "revolute", "bar1", "bar2", point_a=[2, 0, 0], point_b=[0, 1, 0])
    spatial = s.build()
    assert spatial.nq == 14 and spatial.nv == 12 and spatial.num_constraints == 10

    p = saltus.PlanarBuilder()
    p.set_gravity([0, -9.81])
    p.add_body("bar1", mass=78, inertia=104.01625, position=[2, 0, 0])
    p.add_body("bar2", mass=39, inertia=13.008125, position=[4, -1, 0])
    p.add_joint("O", body_b="bar1", point_b=[-2, 0])
    p.add_joint("A", body_a="bar1", body_b="bar2", point_a=[2, 0], point_b=[0, 1])
    planar = p.build()

    sim3 = saltus.Simulation(spatial, tight(spatial))
    sim2 = saltus.Simulation(planar, tight(planar))
    assert sim3.advance_to(1.0).ok and sim2.advance_to(1.0).ok
    q3, q2 = sim3.q, sim2.q
    for i in range(2):
        x, y, z, qw, qx, qy, qz = q3[7 * i:7 * i + 7]
        theta = 2 * math.atan2(qz, qw)
        # rtol 1e-10 over 1 s of a chaotic but short run: 1e-6 leaves room for the different
        # coordinates (quaternions vs angles) and constraint drift of the two formulations.
        assert x == pytest.approx(q2[3 * i], abs=1e-6)
        assert y == pytest.approx(q2[3 * i + 1], abs=1e-6)
        wrapped = math.remainder(theta - q2[3 * i + 2], 2 * math.pi)  # 2 atan2 is mod 2π
        assert abs(wrapped) < 1e-6
        assert abs(z) < 1e-9 and abs(qx) < 1e-9 and abs(qy) < 1e-9  # stays planar (round-off)


def pendulum_callables(length, mass):
    """A point mass on a massless rod in Cartesian coordinates q = (x, y):
    g = (x² + y² − L²)/2, G = (x, y), γ = vx² + vy² (so that g̈ = G v̇ + γ)."""
    return saltus.Constraints(
        ["rod"],
        g=lambda t, q: np.array([0.5 * (q @ q - length**2)]),
        G=lambda t, q: q.reshape(1, 2),
        gamma=lambda t, q, v: np.array([v @ v]))


def test_callable_constraint_pendulum_matches_the_angle_equation():
    L, m = 0.8, 2.0
    model = saltus.Model.lagrangian(
        2, mass=m * np.eye(2), force=lambda t, q, v: np.array([0.0, -m * G]),
        q0=[L, 0.0], v0=[0.0, 0.0], names=["x", "y"],
        constraints=[pendulum_callables(L, m)],
        potential=lambda t, q: m * G * q[1])
    assert model.constraint_names == ["rod"] and model.velocity_names == ["vx", "vy"]
    sim = saltus.Simulation(model, tight(model))
    assert sim.advance_to(1.0).ok
    # θ measured from the downward vertical: θ̈ = −(g/L) sin θ, θ(0) = π/2, as a 1-DOF model.
    angle = saltus.Model.lagrangian(
        1, force=lambda t, q, v: np.array([-G / L * math.sin(q[0])]), q0=[math.pi / 2], v0=[0])
    ref = saltus.Simulation(angle, tight(angle))
    assert ref.advance_to(1.0).ok
    th = ref.q[0]
    # Both at rtol 1e-10: the difference is the integration error, ~1e-8 m over 1 s.
    assert sim.q[0] == pytest.approx(L * math.sin(th), abs=1e-7)
    assert sim.q[1] == pytest.approx(-L * math.cos(th), abs=1e-7)
    # Tension from the multiplier: λ G = force along the rod; at θ the tension is
    # m (g cos θ + L θ̇²) and λ = −T/L with G = (x, y) of length L.
    T = m * (G * math.cos(th) + L * ref.v[0]**2)
    assert sim.multipliers()[0] == pytest.approx(-T / L, rel=1e-6)


def test_callable_unilateral_constraint_bounces():
    # A 1-DOF ball above a floor: g = q (unilateral, e = 0.5) from callables with a mass M(q).
    h0, e = 0.45, 0.5
    floor = saltus.Constraints(["floor"], g=lambda t, q: q.copy(),
                               G=lambda t, q: np.ones((1, 1)), unilateral=True, restitution=e)
    model = saltus.Model.lagrangian(1, mass=lambda q: np.array([[3.0]]),
                                    force=lambda t, q, v: np.array([-3.0 * G]), q0=[h0],
                                    v0=[0.0], constraints=[floor])
    sim = saltus.Simulation(model, tight(model))
    seen = []
    sim.on_event(lambda ev, q, vm, vp: seen.append((ev.t, vm[0], vp[0])))
    assert sim.advance_to(0.5).ok
    t1 = math.sqrt(2 * h0 / G)
    assert seen[0][0] == pytest.approx(t1, abs=1e-9)  # free flight exact in DOPRI5; root tol
    assert seen[0][2] == pytest.approx(-e * seen[0][1], rel=1e-10)  # Newton's law, LCP round-off


def test_bad_sizes_from_callables_raise_python_exceptions():
    ok_g = lambda t, q: np.array([q[0]])  # noqa: E731
    ok_G = lambda t, q: np.ones((1, 1))  # noqa: E731
    bad = {
        "g": saltus.Constraints(["c"], g=lambda t, q: np.zeros(2), G=ok_G, unilateral=True),
        "G": saltus.Constraints(["c"], g=ok_g, G=lambda t, q: np.ones((2, 1)), unilateral=True),
        "gamma": saltus.Constraints(["c"], g=ok_g, G=ok_G, gamma=lambda t, q, v: "x"),
        "g_t": saltus.Constraints(["c"], g=ok_g, G=ok_G, g_t=lambda t, q: None),
    }
    for name, c in bad.items():
        with pytest.raises(saltus.InvalidArgument, match="constraints 'c'.*" + name):
            model = saltus.Model.lagrangian(1, force=lambda t, q, v: -q, q0=[1.0], v0=[0.0],
                                            constraints=[c])
            sim = saltus.Simulation(model)
            sim.advance_to(0.1)
    with pytest.raises(saltus.InvalidArgument, match="mass"):
        model = saltus.Model.lagrangian(2, mass=lambda q: np.eye(3), q0=[0, 0], v0=[0, 0])
        saltus.Simulation(model).advance_to(0.1)
    with pytest.raises(saltus.InvalidArgument, match="force"):
        model = saltus.Model.lagrangian(2, force=lambda t, q, v: [1.0], q0=[0, 0], v0=[0, 0])
        saltus.Simulation(model).advance_to(0.1)
    # An exception raised inside a callable reaches Python unchanged.
    def boom(t, q):
        raise ZeroDivisionError("inside g")
    with pytest.raises(ZeroDivisionError):
        model = saltus.Model.lagrangian(1, q0=[1.0], v0=[0.0],
                                        constraints=[saltus.Constraints(["c"], g=boom, G=ok_G)])
        saltus.Simulation(model).advance_to(0.1)
    with pytest.raises(saltus.InvalidArgument):
        saltus.Constraints(["c"], g=3, G=ok_G)
    with pytest.raises(saltus.InvalidArgument):
        saltus.Constraints(["c", "d"], g=ok_g, G=ok_G, unilateral=[True])
    with pytest.raises(saltus.InvalidArgument):
        saltus.Model.lagrangian(1, mass=[[-1.0]], q0=[0.0], v0=[0.0])
    with pytest.raises(saltus.InvalidArgument):
        saltus.Model.lagrangian(2, q0=[0.0], v0=[0.0, 0.0])
    # Still alive and usable after all of these.
    model = saltus.Model.lagrangian(1, q0=[0.0], v0=[1.0])
    assert saltus.Simulation(model).advance_to(0.5).ok


def test_builders_reject_bad_items_naming_them():
    b = saltus.PlanarBuilder()
    with pytest.raises(saltus.InvalidArgument, match="body 'a'"):
        b.add_body("a", mass=-1)
    with pytest.raises(saltus.InvalidArgument, match="position"):
        b.add_body("a", position=[0, 0])
    b.add_body("a")
    with pytest.raises(saltus.InvalidArgument, match="unknown body 'nope'"):
        b.add_joint("j", body_b="nope")
    with pytest.raises(saltus.InvalidArgument, match="hinge"):
        b.add_joint("j", "hinge", body_b="a")
    with pytest.raises(saltus.InvalidArgument, match="spring 's'"):
        b.add_spring("s", "ground", "a", stiffness=-1)
    b.add_contact("c", "disk_line", body_b="a", radius_b=-0.1)
    with pytest.raises(saltus.InvalidArgument, match="contact 'c'"):
        b.build()  # radii are checked against the model when it is built
    with pytest.raises(saltus.InvalidArgument):
        saltus.PlanarBuilder().build()  # no bodies
    s = saltus.SpatialBuilder()
    with pytest.raises(saltus.InvalidArgument, match="quaternion"):
        s.add_body("b", quaternion=[1, 0, 0])
    with pytest.raises(saltus.InvalidArgument, match="inertia"):
        s.add_body("b", inertia=np.ones((2, 2)))
    s.add_body("b")
    with pytest.raises(saltus.InvalidArgument, match="joint 'j'"):
        s.add_joint("j", "revolute", "b", "b")


def test_planar_contact_friction_adds_a_tangential_row():
    # friction > 0 appends "<contact>.t" after every normal row; 0 (the default) keeps the rows.
    def model(mu_wall, mu_floor):
        b = saltus.PlanarBuilder()
        b.add_body("disk", mass=1, inertia=0.005, position=[0, 0.1, 0])
        b.add_contact("floor", "disk_line", body_b="disk", radius_b=0.1, friction=mu_floor)
        b.add_contact("wall", "disk_line", body_b="disk", point_a=[-1, 0], normal_a=[1, 0],
                      radius_b=0.1, friction=mu_wall)
        return b.build()
    assert model(0.0, 0.0).constraint_names == ["floor", "wall"]
    assert model(0.3, 0.5).constraint_names == ["floor", "wall", "floor.t", "wall.t"]
    assert model(0.3, 0.0).constraint_names == ["floor", "wall", "wall.t"]
    for bad in (-0.1, float("nan"), float("inf")):
        with pytest.raises(saltus.InvalidArgument, match="contact 'wall'.*friction"):
            model(bad, 0.0)
