// contact::Fcl() for programs that link FCL (fcl_backend.h): the backend built into them.
#include "contact/fcl_backend.h"

extern "C" const saltus::contact::FclBackend* saltus_fcl_backend();

namespace saltus::contact {

const FclBackend& Fcl() { return *saltus_fcl_backend(); }

bool FclLoaded() { return true; }

}  // namespace saltus::contact
