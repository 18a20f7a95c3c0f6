// Helpers shared by the source files of the Python module `saltus` (python/saltus_module.cc,
// python/model_bindings.cc): conversion of Python objects to Eigen arrays with size checks that
// throw saltus::InvalidArgument naming the item (a Python saltus.InvalidArgument, never a crash).
#pragma once

#include <pybind11/pybind11.h>

#include <Eigen/Dense>
#include <string>

#include "saltus/saltus.h"

namespace saltus::python {

// A 1-D array of floats (anything numpy converts: list, tuple, ndarray). `n` ≥ 0 requires that
// size. Throws saltus::InvalidArgument("<what> must be ...").
Eigen::VectorXd ToVector(const pybind11::handle& o, const std::string& what, Eigen::Index n = -1);
// A rows × cols array of floats; a 1-D array of size cols is accepted when rows == 1.
Eigen::MatrixXd ToMatrix(const pybind11::handle& o, const std::string& what, Eigen::Index rows,
                         Eigen::Index cols);
// A callable, or throws saltus::InvalidArgument("<what> must be callable <signature>").
pybind11::function ToCallable(const pybind11::handle& o, const std::string& what,
                              const std::string& signature);

// Adds Model.planar/SpatialBuilder/PlanarBuilder/Constraints and Model.lagrangian to module m.
void BindModelBuilders(pybind11::module_& m, pybind11::class_<saltus::Model>& model);

}  // namespace saltus::python
