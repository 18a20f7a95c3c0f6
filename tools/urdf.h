// URDF robot descriptions (the ROS Unified Robot Description Format, version 1.0, read by
// tools/xml_reader.h) as items of a spatial scene (tools/scene.h, engine/spatial_model.h), for
// `saltus run robot.urdf` and `include:` in a scene file (docs/scene-format.md, "URDF").
//
//   root link                      the ground: fixed in the world, its frame the world frame
//                                  (as Pinocchio and MuJoCo do without a floating base)
//   link with <inertial>           a body whose frame is the link frame: mass, centre of mass at
//                                  the inertial origin, inertia I_link = R I_inertial Rᵀ with R
//                                  the rotation of the inertial origin
//   revolute, continuous joint     revolute joint about the axis (point_a, axis_a, ref_a: the
//                                  joint origin in the parent link; point_b = 0, axis_b, ref_b in
//                                  the child link, ref ⟂ axis, so that the engine's joint angle
//                                  is the URDF joint position)
//   prismatic joint                prismatic joint along the axis (displacement = position)
//   fixed joint                    a fixed joint to a link with mass; a link without mass is
//                                  merged into its parent (its shapes and children move there)
//   <limit lower upper>            revolute and prismatic: unilateral stops
//                                  (contact/joint_limits.h), named by the joint
//   <dynamics damping>             revolute, continuous: a torsional damper (stiffness 0)
//   <collision> sphere, box, cylinder (axis z, as in URDF), mesh (OBJ or STL, scaled; convex on
//                                  moving links, any surface on the root): shapes named
//                                  "<link>" (first) or "<link>.<k>"
// What is read of each element, with liburdfdom's conventions (so that a file gives the model
// it gave when Saltus read URDF with liburdfdom): <origin xyz rpy> (default 0; the rotation is
// the quaternion of the fixed-axis roll–pitch–yaw angles, R = Rz(yaw) Ry(pitch) Rx(roll));
// <inertial> needs <mass value> and <inertia> with all six of ixx ixy ixz iyy iyz izz; a joint's
// <axis xyz> defaults to (1, 0, 0); revolute and prismatic joints need a <limit> with effort and
// velocity (lower, upper default 0); <dynamics> needs damping or friction; a link's children are
// visited in the order of their joints' names. <visual>, <material>, <transmission>, <gazebo>
// and every other element are ignored. Numbers are decimal (leading sign, fraction, exponent),
// finite, and vectors are three numbers separated by whitespace.
// The joints must form one tree: one root link, each other link the child of exactly one joint
// and reachable from the root (no loop). floating and planar joints, a moving joint to a link
// without mass and mimic joints are errors. The initial configuration is the forward
// kinematics at the given joint positions (default 0) with zero velocities. Shapes of two links
// joined by a joint are listed in adjacent_shapes (they touch at the joint by construction;
// scenes exclude them from contact pairs).
// Errors are SceneError naming the URDF file, the line of the element and the element
// ("robot.urdf:12: joint 'elbow': ..."); malformed XML is "malformed URDF: ..." at the line
// where the XML reader stopped.
#pragma once

#include <map>
#include <string>
#include <utility>
#include <vector>

#include "contact/joint_limits.h"
#include "contact/shapes.h"
#include "engine/spatial_model.h"

namespace saltus::tools {

struct UrdfRobot {
  std::string name;  // <robot name>
  // Body and joint indices are local: bodies[i] is body i, engine::kGround is the root.
  std::vector<engine::SpatialBody> bodies;
  std::vector<engine::SpatialJoint> joints;
  std::vector<engine::SpatialTorsionalSpring> dampers;  // .joint: index into joints
  std::vector<contact::JointLimit> limits;              // .joint: index into joints
  std::vector<contact::Shape> shapes;
  std::vector<int> shape_bodies;                     // per shape: its body (kGround: root)
  std::vector<std::pair<int, int>> adjacent_shapes;  // (i < j): their links share a joint
  std::vector<std::string> warnings;                 // ignored elements, e.g. friction
};

// Reads `path`. joint_positions: initial positions (rad or m) by joint name; an unknown name
// is an error. Throws SceneError.
UrdfRobot ReadUrdf(const std::string& path,
                   const std::map<std::string, double>& joint_positions = {});

}  // namespace saltus::tools
