// The beam of the flexible-body tests (engine/flexible_beam.h): the cantilever of Kane, Ryan &
// Banerjee (J. Guidance 10 (1987) 139–151, Sec. V), A = 4e-4 m², I = 2e-7 m⁴, ρ = 3000 kg/m³,
// E = 7e10 Pa (ρA = 1.2 kg/m, EI = 14 000 N·m²), L = 10 m there.
#pragma once

#include <string>

#include "engine/flexible_beam.h"
#include "engine/planar_model.h"

namespace saltus::engine::testing {

inline BeamProperties KaneBeam(int elements, int modes,
                               BeamReference reference = BeamReference::kClamped,
                               double length = 10.0) {
  BeamProperties p;
  p.length = length;
  p.area = 4e-4;
  p.second_moment = 2e-7;
  p.density = 3000.0;
  p.youngs_modulus = 7e10;
  p.elements = elements;
  p.modes = modes;
  p.reference = reference;
  return p;
}

// A flexible body with this beam, its frame at the origin, at rest.
inline PlanarBody FlexibleBody(const std::string& name, const BeamProperties& beam) {
  PlanarBody body;
  body.name = name;
  body.beam = beam;
  return body;
}

}  // namespace saltus::engine::testing
