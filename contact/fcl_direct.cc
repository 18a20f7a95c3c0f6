// contact::FclApi() for programs that link FCL (fcl_backend.h): the functions built into them.
#include "contact/fcl_backend.h"

namespace saltus::contact {

const SaltusFclApi& FclApi() { return *saltus_fcl_api(); }

bool FclLoaded() { return true; }

}  // namespace saltus::contact
