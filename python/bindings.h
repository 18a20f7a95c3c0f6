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

// Runs fn, a call the Python user writes as `name` ("Simulation.run", "Simulation.q"): an error
// the facade raises about one of its C++ calls (saltus::Error::call(), e.g. "AdvanceTo") is
// raised again, same type, as "<name>: <detail>", so that messages name what the Python user
// wrote. Other errors (scene errors, Python exceptions from callbacks) pass unchanged.
template <class Fn>
auto AsCalled(const char* name, Fn&& fn) -> decltype(fn()) {
  try {
    return fn();
  } catch (const SceneError&) {
    throw;
  } catch (const InvalidArgument& e) {
    if (e.call().empty()) throw;
    throw InvalidArgument(name, e.detail());
  } catch (const StateError& e) {
    if (e.call().empty()) throw;
    throw StateError(name, e.detail());
  } catch (const Error& e) {
    if (e.call().empty()) throw;
    throw Error(name, e.detail());
  }
}

// Adds Model.planar/SpatialBuilder/PlanarBuilder/Constraints and Model.lagrangian to module m.
void BindModelBuilders(pybind11::module_& m, pybind11::class_<saltus::Model>& model);

}  // namespace saltus::python
