/* The plain-data interface of the FCL module (contact/fcl_module.cc): every call Saltus makes
 * into FCL 0.7 crosses it, as C types only.
 *
 * Why C: the `saltus` command line links its C++ runtime statically (docs/benchmarks.md, "Static
 * C++ runtime": 0.85 ms of a 4 ms run were the dynamic libstdc++'s start-up and lazy binding),
 * while the module libsaltus_fcl.so, opened with the first 3D shape (fcl_loader.cc), brings FCL
 * and with it the shared libstdc++. The process then holds two C++ runtimes, each with its own
 * heap functions, exception machinery and type information. Nothing of one may reach the other:
 * no C++ object, no exception, no memory allocated by one and freed by the other. So:
 *   - geometries and box trees are opaque handles, created and destroyed by the module's own
 *     functions (release_geometry, release_box_tree);
 *   - arguments and results are doubles, ints and arrays owned by the caller;
 *   - a function that can fail returns 0 on success and otherwise writes a message into the
 *     caller's buffer `error` (at most error_size bytes, NUL-terminated) and returns non-zero:
 *     every exception is caught inside the module.
 * Poses are 12 doubles: the rotation R column by column (R(0,0), R(1,0), R(2,0), R(0,1), …),
 * then the translation p; a point x of the frame is R x + p in the world.
 * Programs that link FCL directly (tests, the Python module) call the same functions
 * (saltus_fcl_api, fcl_direct.cc); contact/fcl_backend.h wraps them in C++ for the rest of
 * Saltus. */
#ifndef SALTUS_CONTACT_FCL_MODULE_H_
#define SALTUS_CONTACT_FCL_MODULE_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Raised whenever a function below changes; the loader refuses a module of another version. */
#define SALTUS_FCL_ABI_VERSION 1

typedef struct SaltusFclGeometry SaltusFclGeometry; /* an FCL collision geometry */
typedef struct SaltusFclBoxTree SaltusFclBoxTree;   /* FCL's dynamic AABB tree over boxes */

enum SaltusFclShape {
  SALTUS_FCL_SPHERE = 0,    /* params: radius */
  SALTUS_FCL_BOX = 1,       /* params: the three side lengths */
  SALTUS_FCL_CYLINDER = 2,  /* params: radius, length (axis z) */
  SALTUS_FCL_CAPSULE = 3,   /* params: radius, length (axis z) */
  SALTUS_FCL_ELLIPSOID = 4, /* params: the three radii */
  SALTUS_FCL_HALFSPACE = 5  /* params: normal (3), offset: {x : n·x <= offset} */
};

typedef struct SaltusFclDistance {
  double distance;   /* signed where asked for; FCL's min_distance */
  double point_a[3]; /* the nearest points, in the world */
  double point_b[3];
} SaltusFclDistance;

typedef struct SaltusFclContact {
  int found;         /* whether the geometries overlap */
  double depth;      /* FCL's first contact: penetration depth, */
  double normal[3];  /* normal from A to B */
  double position[3];
} SaltusFclContact;

typedef struct SaltusFclApi {
  int abi_version; /* SALTUS_FCL_ABI_VERSION */

  /* A primitive (enum SaltusFclShape with its params), or NULL with the message in error. */
  SaltusFclGeometry* (*new_shape)(int shape, const double* params, char* error, size_t error_size);
  /* A mesh: vertices as x, y, z triples, triangles as index triples. convex != 0: a convex
   * polytope (fcl::Convex); otherwise a triangle soup in an OBBRSS tree (fcl::BVHModel). */
  SaltusFclGeometry* (*new_mesh)(int convex, const double* vertices, size_t vertex_count,
                                 const int* triangles, size_t triangle_count, char* error,
                                 size_t error_size);
  void (*release_geometry)(SaltusFclGeometry* geometry);

  /* fcl::distance with nearest points (the libccd or the independent GJK solver). */
  int (*distance)(const SaltusFclGeometry* a, const double* pose_a, const SaltusFclGeometry* b,
                  const double* pose_b, double tolerance, int indep_solver, int signed_distance,
                  SaltusFclDistance* result, char* error, size_t error_size);
  /* fcl::collide asking for one contact. */
  int (*collide)(const SaltusFclGeometry* a, const double* pose_a, const SaltusFclGeometry* b,
                 const double* pose_b, int indep_solver, SaltusFclContact* result, char* error,
                 size_t error_size);

  SaltusFclBoxTree* (*new_box_tree)(char* error, size_t error_size);
  void (*release_box_tree)(SaltusFclBoxTree* tree);
  /* Adds a box of the given side lengths centred on its frame at `pose`, with identifier id;
   * its handle (0, 1, … in the order of addition) in *handle. */
  int (*box_tree_add)(SaltusFclBoxTree* tree, const double* size, const double* pose, int id,
                      int* handle, char* error, size_t error_size);
  int (*box_tree_resize)(SaltusFclBoxTree* tree, int handle, const double* size, char* error,
                         size_t error_size);
  int (*box_tree_set_pose)(SaltusFclBoxTree* tree, int handle, const double* pose, char* error,
                           size_t error_size);
  /* Rebuilds or refits the tree to the boxes' sizes and poses. */
  int (*box_tree_refit)(SaltusFclBoxTree* tree, char* error, size_t error_size);
  /* Finds every pair of overlapping boxes (as of the last refit), kept in the tree; their number
   * in *count. */
  int (*box_tree_collide)(SaltusFclBoxTree* tree, size_t* count, char* error, size_t error_size);
  /* Copies the pairs of the last box_tree_collide as ids (min, max) into pairs[2 i], pairs[2 i
   * + 1]; the caller's array holds 2 × count ints. */
  void (*box_tree_pairs)(const SaltusFclBoxTree* tree, int* pairs);
} SaltusFclApi;

/* The functions of this module (looked up by name in libsaltus_fcl.so). */
const SaltusFclApi* saltus_fcl_api(void);

#ifdef __cplusplus
}
#endif

#endif /* SALTUS_CONTACT_FCL_MODULE_H_ */
