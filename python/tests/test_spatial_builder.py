"""unittest tests (run by pytest from ctest) of saltus.SpatialBuilder's scene-file items:
drivers, torsional spring-dampers, time-dependent loads, shapes and contact pairs. A model built
in Python goes through the scene loader's construction (tools::BuildSceneSystem), so it must
reproduce the scene file's run to round-off; the force elements are also checked against
closed forms."""
import math
import os
import unittest

import numpy as np

import saltus

G = 9.81


def scene_path(*parts):
    return os.path.join(os.environ["SALTUS_SOURCE_DIR"], "examples", *parts)


def impact_times(trajectory):
    return [e.t for e in trajectory.events if e.kind == saltus.EventKind.impact]


def slider_crank():
    """examples/spatial/slider_crank.yaml, item by item (axis_b given where the scene file takes
    its default, axis_a seen from body b at the initial pose)."""
    b = saltus.SpatialBuilder()
    b.set_gravity([0, 0, -9.81])
    b.add_body("crank", mass=1.2, inertia=[1.0e-4, 1.0e-5, 1.0e-4], position=[0, 0.1, 0.16],
               angular_velocity=[-6.283185307179586, 0, 0])
    b.add_body("rod", mass=0.5, inertia=[4.0e-3, 4.0e-4, 4.0e-3], position=[0.1, 0.05, 0.1],
               quaternion=[0.31245971410378254, 0.53340209679417694, -0.75434447948457128,
                           -0.22094238269039443])
    b.add_body("slider", mass=2, inertia=[1.0e-4] * 3, position=[0.2, 0, 0])
    b.add_joint("crank_pivot", "revolute", "ground", "crank", point_a=[0, 0.1, 0.12],
                point_b=[0, 0, -0.04], axis_a=[1, 0, 0], axis_b=[1, 0, 0], ref_a=[0, 1, 0],
                ref_b=[0, 0, 1])
    b.add_joint("pin", "spherical", "crank", "rod", point_a=[0, 0, 0.04], point_b=[0, 0.15, 0])
    b.add_joint("wrist", "universal", "slider", "rod", point_b=[0, -0.15, 0], axis_a=[0, 1, 0],
                axis_b=[0, 0, 1])
    b.add_joint("guide", "prismatic", "ground", "slider", axis_a=[1, 0, 0], axis_b=[1, 0, 0])
    b.add_driver("motor", "crank_pivot", kind="angle", profile="constant_rate",
                 value0=1.5707963267948966, rate=-6.283185307179586)
    return b


def ball_on_table():
    """examples/spatial/ball_on_table.yaml, item by item."""
    b = saltus.SpatialBuilder()
    b.set_gravity([0, 0, -9.81])
    b.add_body("ball", mass=1, inertia=[0.004] * 3, position=[0.1, 0.05, 1.32])
    b.add_shape("floor", "plane", normal=[0, 0, 1], offset=0)
    b.add_shape("table", "box", half_size=[0.6, 0.4, 0.02], position=[0, 0, 0.7])
    b.add_shape("ball_shape", "sphere", body="ball", radius=0.1)
    b.add_contact_pair("table", "ball_shape", restitution=0.8)
    return b


class SceneFileEquivalence(unittest.TestCase):
    def test_driven_slider_crank_reproduces_the_scene_file(self):
        built = slider_crank().build()
        scene = saltus.Model.from_scene_file(scene_path("spatial", "slider_crank.yaml"))
        self.assertEqual(built.constraint_names, scene.constraint_names)
        self.assertIn("motor", built.constraint_names)
        # Both are assembled by the same code from the same numbers: equal to round-off.
        self.assertLess(np.max(np.abs(built.initial_q - scene.initial_q)), 1e-14)
        opts = scene.options  # DOPRI5 index1, rtol 1e-9 (the scene file's)
        (tb, rb), (ts, rs) = [saltus.Simulation(m, opts).run(0.5) for m in (built, scene)]
        self.assertTrue(rb.ok and rs.ok)
        self.assertEqual(tb.q.shape, ts.q.shape)
        # The same system and options: the same arithmetic; 1e-12 is the brief's round-off margin.
        self.assertLess(np.max(np.abs(tb.q - ts.q)), 1e-12)
        self.assertLess(np.max(np.abs(tb.v - ts.v)), 1e-12)
        # The driver holds the crank angle th = pi/2 - 2 pi t: the pin is at (0, 0.1 + 0.08 cos
        # th, 0.12 + 0.08 sin th) and the slider at x = sqrt(0.3^2 - py^2 - pz^2) (closed form in
        # the scene file). rtol 1e-9 with projection: 1e-7 m margin.
        t = tb.t[-1]
        th = math.pi / 2 - 2 * math.pi * t
        py, pz = 0.1 + 0.08 * math.cos(th), 0.12 + 0.08 * math.sin(th)
        x = math.sqrt(0.3 ** 2 - py ** 2 - pz ** 2)
        self.assertAlmostEqual(tb.q[-1, 14], x, delta=1e-7)

    def test_ball_on_table_bounces_like_the_scene_file(self):
        b = ball_on_table()
        self.assertEqual(b.contact_pairs, ["floor-ball_shape", "table-ball_shape"])
        built = b.build()
        scene = saltus.Model.from_scene_file(scene_path("spatial", "ball_on_table.yaml"))
        self.assertEqual(built.constraint_names, scene.constraint_names)
        opts = scene.options  # global restitution 0.5, the pair's 0.8
        (tb, rb), (ts, rs) = [saltus.Simulation(m, opts).run(1.5) for m in (built, scene)]
        self.assertTrue(rb.ok and rs.ok)
        ib, is_ = impact_times(tb), impact_times(ts)
        self.assertGreaterEqual(len(ib), 3)
        self.assertEqual(len(ib), len(is_))
        for a, c in zip(ib, is_):
            self.assertAlmostEqual(a, c, delta=1e-10)  # the brief's tolerance
        # Closed form (scene file header): t1 = sqrt(2 h / g), flights 2 e^k v1 / g with the
        # pair's e = 0.8 (not the global 0.5). 1e-8 s: the root finding's tolerance order.
        t1 = math.sqrt(2 * 0.5 / G)
        v1 = G * t1
        expected = [t1]
        for k in range(1, len(ib)):
            expected.append(expected[-1] + 2 * 0.8 ** k * v1 / G)
        for a, c in zip(ib, expected):
            self.assertAlmostEqual(a, c, delta=1e-8)

    def test_shape_pairs_match_the_scene_files(self):
        # Default all-pairs selection, boxes on a plane, and a per-triangle mesh: the same
        # contact rows in the same order as the scene loader's.
        box = saltus.SpatialBuilder()
        box.set_gravity([0, 0, -9.81])
        box.add_body("box", mass=1,
                     inertia=[0.0041666666666666675, 0.008333333333333333, 0.010833333333333334],
                     position=[0, 0, 0.44087425629143506],
                     quaternion=[0.9479577701986341, 0.24564791141178532, 0.1965183291294283,
                                 0.04912958228235707],
                     velocity=[0.2, 0, 0], angular_velocity=[1, -2, 3])
        box.add_shape("floor", "plane", normal=[0, 0, 1])
        box.add_shape("brick", "box", body="box", half_size=[0.15, 0.1, 0.05])
        scene = saltus.Model.from_scene_file(scene_path("spatial", "tumbling_box.yaml"))
        built = box.build()
        self.assertEqual(built.constraint_names, scene.constraint_names)
        opts = scene.options
        (tb, rb), (ts, rs) = [saltus.Simulation(m, opts).run(0.6) for m in (built, scene)]
        self.assertTrue(rb.ok and rs.ok)
        ib, is_ = impact_times(tb), impact_times(ts)
        self.assertGreaterEqual(len(ib), 1)
        self.assertEqual(len(ib), len(is_))
        for a, c in zip(ib, is_):
            self.assertAlmostEqual(a, c, delta=1e-10)  # same arithmetic

        bowl = saltus.SpatialBuilder()
        bowl.add_body("ball", mass=0.5, inertia=[0.0005] * 3,
                      position=[0.21094723698584933, 0, 0.113863672768236], velocity=[0, 0.4, 0])
        bowl.add_shape("bowl", "triangle_mesh", file=scene_path("spatial", "bowl.obj"),
                       per_triangle=True)
        bowl.add_shape("ball_shape", "sphere", body="ball", radius=0.05)
        scene = saltus.Model.from_scene_file(scene_path("spatial", "sphere_in_bowl.yaml"))
        self.assertEqual(bowl.build().constraint_names, scene.constraint_names)
        self.assertGreater(len(bowl.contact_pairs), 100)  # one pair per facet

    def test_groups_exclusions_and_default_none(self):
        b = saltus.SpatialBuilder()
        b.add_body("a", position=[0, 0, 1])
        b.add_body("c", position=[0, 0, 3])
        b.add_shape("floor", "plane")
        b.add_shape("sa", "sphere", body="a", radius=0.1, group=2, mask=1)
        b.add_shape("sc", "capsule", body="c", radius=0.1, length=0.5, group=4)
        b.add_shape("ec", "ellipsoid", body="c", radii=[0.1, 0.2, 0.3], position=[0, 0, 0.5])
        # sa (group 2, touches group 1 only) - sc (group 4): filtered out; sc-ec: same body.
        self.assertEqual(b.contact_pairs, ["floor-sa", "floor-sc", "floor-ec", "sa-ec"])
        b.exclude_contact("ec", "sa")
        self.assertEqual(b.contact_pairs, ["floor-sa", "floor-sc", "floor-ec"])
        b.set_contact_default("none")
        b.add_contact_pair("sc", "sa", restitution=0.3)  # listed pairs override the filters
        self.assertEqual(b.contact_pairs, ["sa-sc"])


class ForceElementsAndDrivers(unittest.TestCase):
    @staticmethod
    def pendulum(gravity=(0, 0, 0)):
        # A rod of 1 kg, J_zz = 0.1, rotating about the world z axis at the origin.
        b = saltus.SpatialBuilder()
        b.set_gravity(list(gravity))
        b.add_body("rod", mass=1, inertia=[0.1, 0.1, 0.1], position=[0.5, 0, 0])
        b.add_joint("hinge", "revolute", "ground", "rod", point_b=[-0.5, 0, 0])
        return b

    @staticmethod
    def angle(q):
        # rotation about z of body 0: q = (x, y, z, w, qx, qy, qz)
        return 2 * math.atan2(q[6], q[3])

    def options(self):
        o = saltus.Options()
        o.integrator = "dopri5"
        o.rtol, o.atol = 1e-10, 1e-12
        return o

    def test_sine_and_polynomial_drivers_prescribe_the_angle(self):
        for profile, params, phi in [
            ("sine", dict(value0=0.1, amplitude=0.5, frequency=3.0, phase=0.2),
             lambda t: 0.1 + 0.5 * math.sin(3.0 * t + 0.2)),
            ("polynomial", dict(coefficients=[0.0, 0.5, -0.25, 0.125]),
             lambda t: 0.5 * t - 0.25 * t ** 2 + 0.125 * t ** 3),
        ]:
            b = self.pendulum(gravity=(0, -9.81, 0))
            b.add_driver("drive", "hinge", kind="angle", profile=profile, **params)
            model = b.build()  # assembled onto phi(0)
            self.assertAlmostEqual(self.angle(model.initial_q), phi(0.0), delta=1e-10)
            sim = saltus.Simulation(model, self.options())
            for t in (0.3, 0.7, 1.0):
                self.assertTrue(sim.advance_to(t).ok)
                # The driver row holds sin(theta - phi) = 0 to the projection tolerance (1e-10).
                self.assertAlmostEqual(self.angle(sim.q), phi(t), delta=1e-9, msg=profile)

    def test_torsional_spring_oscillates_at_sqrt_k_over_j(self):
        # J about the hinge = J_c + m d^2 = 0.1 + 0.25; theta(t) = theta0 cos(sqrt(k / J) t).
        k, J, theta0 = 2.0, 0.35, 0.3
        b = self.pendulum()
        b.add_torsional_spring("spring", "hinge", stiffness=k, angle0=-theta0)
        sim = saltus.Simulation(b.build(), self.options())
        w = math.sqrt(k / J)
        for t in (0.25, 0.5, 1.0):
            self.assertTrue(sim.advance_to(t).ok)
            # rtol 1e-10 over ~1 period: 1e-7 rad margin.
            self.assertAlmostEqual(self.angle(sim.q), -theta0 + theta0 * math.cos(w * t),
                                   delta=1e-7)

    def test_sine_scaled_load_moves_a_free_body(self):
        # F(t) = F0 sin(w t) on a free 2 kg body: x(t) = F0/(m w) (t - sin(w t) / w).
        b = saltus.SpatialBuilder()
        b.add_body("b", mass=2.0, inertia=[1, 1, 1])
        b.add_load("push", "b", force=[3.0, 0, 0],
                   scale={"profile": "sine", "amplitude": 1.0, "frequency": 4.0})
        sim = saltus.Simulation(b.build(), self.options())
        self.assertTrue(sim.advance_to(1.0).ok)
        x = 3.0 / (2.0 * 4.0) * (1.0 - math.sin(4.0) / 4.0)
        self.assertAlmostEqual(sim.q[0], x, delta=1e-9)  # rtol 1e-10 on O(0.3) m


class BadInput(unittest.TestCase):
    def raises(self, pattern, fn, *args, **kwargs):
        with self.assertRaisesRegex(saltus.InvalidArgument, pattern):
            fn(*args, **kwargs)

    def test_drivers_springs_and_loads(self):
        b = ForceElementsAndDrivers.pendulum()
        b.add_joint("ball", "spherical", "rod", "ground", point_a=[0.5, 0, 0], point_b=[1, 0, 0])
        self.raises("driver 'd'.*unknown joint 'nope'", b.add_driver, "d", "nope")
        self.raises("driver 'd'.*joint index 7", b.add_driver, "d", 7)
        self.raises("driver 'd'.*kind 'twist'", b.add_driver, "d", "hinge", kind="twist")
        self.raises("driver 'd'.*profile 'ramp'", b.add_driver, "d", "hinge", profile="ramp")
        self.raises("driver 'd'.*'rate' is not a parameter of a sine", b.add_driver, "d", "hinge",
                    profile="sine", rate=1.0)
        self.raises("driver 'd'.*coefficients", b.add_driver, "d", "hinge", profile="polynomial")
        self.raises("driver 'd'.*revolute or cylindrical", b.add_driver, "d", "ball")
        self.raises("driver 'd'.*prismatic or cylindrical", b.add_driver, "d", "hinge",
                    kind="displacement")
        self.raises("driver 'd'", b.add_driver, "d", "hinge", value0=float("nan"))
        self.raises("torsional spring 't'.*revolute", b.add_torsional_spring, "t", "ball",
                    stiffness=1)
        self.raises("torsional spring 't'.*stiffness", b.add_torsional_spring, "t", "hinge",
                    stiffness=-1)
        self.raises("load 'l'.*scale", b.add_load, "l", "rod", scale=3.0)
        self.raises("load 'l'.*unknown key 'speed'", b.add_load, "l", "rod",
                    scale={"profile": "sine", "speed": 1})
        self.raises("load 'l'.*needs a 'profile'", b.add_load, "l", "rod", scale={"rate": 1})
        self.raises("prismatic friction 'f'.*prismatic", b.add_prismatic_friction, "f", "hinge",
                    mu=0.1)
        b.add_driver("d", "hinge")  # the failed calls left nothing behind
        self.assertIn("d", b.build().constraint_names)

    def test_shapes_and_pairs(self):
        b = saltus.SpatialBuilder()
        b.add_body("a")
        b.add_body("c", position=[0, 0, 2])
        self.raises("shape 's'.*unknown type 'cone'", b.add_shape, "s", "cone")
        self.raises("shape 's'.*needs 'radius'", b.add_shape, "s", "sphere", body="a")
        self.raises("shape 's'", b.add_shape, "s", "sphere", body="a", radius=0.0)
        self.raises("shape 's'.*'half_size' is not a parameter of a sphere", b.add_shape, "s",
                    "sphere", body="a", radius=1, half_size=[1, 1, 1])
        self.raises("shape 's'.*unknown body 'z'", b.add_shape, "s", "sphere", body="z", radius=1)
        self.raises("shape 's'.*quaternion", b.add_shape, "s", "sphere", body="a", radius=1,
                    quaternion=[2, 0, 0, 0])
        self.raises("shape 's'.*group", b.add_shape, "s", "sphere", body="a", radius=1, group=-1)
        self.raises("shape 's'.*per_triangle", b.add_shape, "s", "sphere", body="a", radius=1,
                    per_triangle=True)
        self.raises("missing.obj", b.add_shape, "s", "convex_mesh", body="a", file="missing.obj")
        self.raises("shape 's'", b.add_shape, "s", "box", body="a", half_size=[1, 0, 1])
        b.add_shape("s", "sphere", body="a", radius=0.1)
        self.raises("shape 's'.*already used", b.add_shape, "s", "sphere", body="c", radius=0.1)
        b.add_shape("s2", "sphere", body="a", radius=0.1, position=[0, 0, 0.2])
        b.add_shape("floor", "plane")
        b.add_shape("wall", "plane", normal=[1, 0, 0])
        b.add_shape("k", "box", body="c", half_size=[0.1, 0.1, 0.1])
        self.raises("unknown shape 'q'", b.add_contact_pair, "s", "q")
        self.raises("cannot touch itself", b.add_contact_pair, "s", "s")
        self.raises("contact pair 's-s2'.*same body", b.add_contact_pair, "s", "s2")
        self.raises("contact pair 'floor-wall'.*ground", b.add_contact_pair, "floor", "wall")
        self.raises("contact pair 's-k'.*restitution", b.add_contact_pair, "s", "k",
                    restitution=1.5)
        b.add_contact_pair("s", "k", restitution=0.5)
        self.raises("listed twice", b.add_contact_pair, "k", "s")
        self.raises("also listed", b.exclude_contact, "s", "k")
        b.exclude_contact("floor", "k")
        self.raises("also excluded", b.add_contact_pair, "k", "floor")
        self.raises("default must be 'all'", b.set_contact_default, "some")
        self.assertNotIn("floor-k", b.contact_pairs)
        self.assertIn("s-k", b.contact_pairs)
        b.build()

    def test_contact_pair_friction_and_the_default_friction(self):
        # Like the scene file's `friction` of a listed pair and simulation.friction: each normal
        # row of a pair with mu > 0 gets "<row>.t1" and "<row>.t2" after all normal rows.
        b = ball_on_table()
        self.assertEqual(b.build().constraint_names, ["floor-ball_shape", "table-ball_shape"])
        b.set_friction(0.2)  # floor-ball (not listed)
        self.assertEqual(b.build().constraint_names,
                         ["floor-ball_shape", "table-ball_shape", "floor-ball_shape.t1",
                          "floor-ball_shape.t2", "table-ball_shape.t1", "table-ball_shape.t2"])
        c = ball_on_table()
        self.raises("contact pair 'floor-ball_shape'.*friction must be a finite number >= 0",
                    c.add_contact_pair, "floor", "ball_shape", friction=-0.5)
        self.raises("friction must be a number", c.add_contact_pair, "floor", "ball_shape",
                    friction="rough")
        self.raises("friction must be a finite number >= 0", c.set_friction, float("nan"))
        d = saltus.SpatialBuilder()
        d.add_body("ball", position=[0, 0, 1])
        d.add_shape("floor", "plane")
        d.add_shape("ball_shape", "sphere", body="ball", radius=0.1)
        d.set_friction(0.7)
        d.add_contact_pair("floor", "ball_shape", friction=0.0)  # its own: frictionless
        self.assertEqual(d.build().constraint_names, ["floor-ball_shape"])

    def test_rolling_and_spinning_resistance_keys(self):
        # As the scene keys rolling_friction / spinning_friction (docs/friction.md): rows
        # "<row>.r1", "<row>.r2" (rolling) and "<row>.s" (spinning) on pairs with a sphere.
        b = ball_on_table()
        b.set_friction(0.5)
        b.set_resistance(rolling_friction=0.01)
        names = b.build().constraint_names
        self.assertIn("floor-ball_shape.r1", names)
        self.assertIn("table-ball_shape.r2", names)
        self.assertNotIn("floor-ball_shape.s", names)
        c = ball_on_table()
        c.add_contact_pair("floor", "ball_shape", friction=0.5, spinning_friction=0.002)
        names = c.build().constraint_names
        self.assertIn("floor-ball_shape.s", names)
        self.assertNotIn("floor-ball_shape.r1", names)
        self.raises("rolling_friction must be a finite number >= 0", c.set_resistance, -0.1)
        d = ball_on_table()
        self.raises("contact pair 'floor-ball_shape'.*spinning_friction must be a finite",
                    d.add_contact_pair, "floor", "ball_shape", spinning_friction=float("nan"))

    def test_an_impossible_assembly_names_the_driver(self):
        # A driver that asks a prismatic joint for 2 m while a distance rod allows 1 m.
        b = saltus.SpatialBuilder()
        b.add_body("s", position=[1, 0, 0])
        b.add_joint("guide", "prismatic", "ground", "s", axis_a=[1, 0, 0], axis_b=[1, 0, 0])
        b.add_joint("rod", "distance", "ground", "s", length=1.0)
        b.add_driver("push", "guide", kind="displacement", value0=2.0)
        self.raises("cannot be assembled", b.build)


if __name__ == "__main__":
    unittest.main()
