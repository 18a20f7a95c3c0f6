"""Type stubs of the compiled module `saltus` (python/saltus_module.cc, model_bindings.cc).

python/tests/test_api.py checks that every public name of the module and of its classes is
declared here and that every public function has a docstring.
"""
from enum import Enum
from typing import Any, Callable, Dict, List, Optional, Sequence, Tuple, Union, overload

import numpy as np
import numpy.typing as npt

ArrayLike = npt.ArrayLike
Vector = npt.NDArray[np.float64]
BodyRef = Union[str, int]

__version__: str

class Error(RuntimeError): ...
class InvalidArgument(ValueError): ...
class SceneError(InvalidArgument): ...
class StateError(RuntimeError): ...

class EventKind(Enum):
    impact: int
    takeoff: int
    contact_closed: int
    time: int
    stick: int
    slip: int
    tangential_impact: int
    to_time_stepping: int
    to_event_driven: int

class Event:
    t: float
    kind: EventKind
    rows: List[int]
    impulses: List[float]
    @property
    def tangential_impulses(self) -> npt.NDArray[np.float64]: ...
    @property
    def modes(self) -> List[str]: ...
    @property
    def slip_directions(self) -> npt.NDArray[np.float64]: ...
    energy_gain: bool
    indeterminate: bool
    energy_before: float
    energy_after: float

class Options:
    """A value: Simulation.options is read-only (setting raises AttributeError); Options(other)
    and Model.options are copies to change."""
    @overload
    def __init__(self) -> None: ...
    @overload
    def __init__(self, other: Options) -> None: ...
    @staticmethod
    def keys() -> List[str]: ...
    integrator: str
    formulation: str
    rtol: float
    atol: float
    h_min: float
    h_max: float
    h_init: float
    adaptive: bool
    step: float
    theta: float
    speculative: bool
    project_contacts: Optional[bool]
    sleeping: bool
    sleep_speed: float
    sleep_time: float
    hybrid: bool
    hybrid_events: int
    hybrid_window: float
    hybrid_calm_time: float
    hybrid_calm_speed: float
    safety: float
    error_control: str
    error_time_scale: float
    fac_min: float
    fac_max: float
    newton_tol: float
    max_newton_iterations: int
    rho_inf: float
    output_step: float
    restitution: float
    restitution_threshold: float
    thresholds: Dict[str, float]
    projection: bool
    projection_tolerance: float
    projection_metric: str
    event_projection_tolerance: float
    projection_max_iterations: int
    lcp_solver: str
    painleve: str
    friction_cone: str
    lcp_tolerance: float
    lcp_max_iterations: int
    event_samples: int
    root_tolerance: float
    zeno: Dict[str, float]
    time_events: List[float]
    tau0: float
    tau1: float
    tau3: float
    @property
    def friction(self) -> float: ...
    @property
    def rolling_friction(self) -> float: ...
    @property
    def spinning_friction(self) -> float: ...

class Constraints:
    def __init__(self, names: Sequence[str], g: Callable[[float, Vector], ArrayLike],
                 G: Callable[[float, Vector], ArrayLike],
                 gamma: Optional[Callable[[float, Vector, Vector], ArrayLike]] = None,
                 g_t: Optional[Callable[[float, Vector], ArrayLike]] = None,
                 unilateral: Union[bool, Sequence[bool]] = False,
                 restitution: Union[float, Sequence[float]] = -1.0) -> None: ...
    @property
    def names(self) -> List[str]: ...

class Model:
    @staticmethod
    def from_scene_file(path: str) -> Model: ...
    @staticmethod
    def from_scene_text(yaml: str, label: str = "<scene>") -> Model: ...
    @staticmethod
    def lagrangian(n: int, mass: Any = None, force: Optional[Callable[..., ArrayLike]] = None,
                   *, q0: ArrayLike, v0: ArrayLike, names: Sequence[str] = ...,
                   constraints: Sequence[Constraints] = ...,
                   potential: Optional[Callable[[float, Vector], float]] = None) -> Model: ...
    @property
    def nq(self) -> int: ...
    @property
    def nv(self) -> int: ...
    @property
    def num_constraints(self) -> int: ...
    @property
    def name(self) -> str: ...
    @property
    def initial_q(self) -> Vector: ...
    @property
    def initial_v(self) -> Vector: ...
    @property
    def t_end(self) -> float: ...
    @property
    def options(self) -> Options: ...
    @property
    def position_names(self) -> List[str]: ...
    @property
    def velocity_names(self) -> List[str]: ...
    @property
    def constraint_names(self) -> List[str]: ...

class PlanarBuilder:
    def __init__(self) -> None: ...
    def add_body(self, name: str, mass: float = 1.0, inertia: float = 1.0,
                 position: ArrayLike = ..., velocity: ArrayLike = ...) -> int: ...
    def add_joint(self, name: str, type: str = "revolute", body_a: BodyRef = "ground",
                  body_b: BodyRef = "ground", point_a: ArrayLike = ..., point_b: ArrayLike = ...,
                  axis_a: ArrayLike = ..., angle0: float = 0.0, rate: float = 0.0,
                  length: float = 0.0) -> int: ...
    def add_driver(self, name: str, joint: Union[str, int], kind: str = "angle",
                   profile: str = "constant_rate", value0: Optional[float] = None,
                   rate: Optional[float] = None, coefficients: Optional[Sequence[float]] = None,
                   amplitude: Optional[float] = None, frequency: Optional[float] = None,
                   phase: Optional[float] = None) -> int: ...
    def add_spring(self, name: str, body_a: BodyRef, body_b: BodyRef, point_a: ArrayLike = ...,
                   point_b: ArrayLike = ..., stiffness: float = 0.0, damping: float = 0.0,
                   rest_length: float = 0.0) -> int: ...
    def add_torsional_spring(self, name: str, joint: Union[str, int], stiffness: float = 0.0,
                             damping: float = 0.0, angle0: float = 0.0) -> int: ...
    def add_load(self, name: str, body: BodyRef, force: ArrayLike = ..., point: ArrayLike = ...,
                 torque: float = 0.0, scale: Optional[Dict[str, Any]] = None) -> int: ...
    def add_contact(self, name: str, type: str = "disk_line", body_a: BodyRef = "ground", *,
                    body_b: BodyRef, point_a: ArrayLike = ..., normal_a: ArrayLike = ...,
                    radius_a: float = 0.0, point_b: ArrayLike = ..., radius_b: float = 0.0,
                    restitution: float = -1.0, friction: float = 0.0) -> int: ...
    def set_gravity(self, g: ArrayLike) -> None: ...
    def build(self) -> Model: ...

class SpatialBuilder:
    def __init__(self) -> None: ...
    def add_body(self, name: str, mass: float = 1.0, inertia: ArrayLike = ..., com: ArrayLike = ...,
                 position: ArrayLike = ..., quaternion: ArrayLike = ..., velocity: ArrayLike = ...,
                 angular_velocity: ArrayLike = ...) -> int: ...
    def add_joint(self, name: str, type: str = "revolute", body_a: BodyRef = "ground",
                  body_b: BodyRef = "ground", point_a: ArrayLike = ..., point_b: ArrayLike = ...,
                  axis_a: ArrayLike = ..., axis_b: ArrayLike = ..., ref_a: ArrayLike = ...,
                  ref_b: ArrayLike = ..., length: float = 0.0) -> int: ...
    def add_driver(self, name: str, joint: Union[str, int], kind: str = "angle",
                   profile: str = "constant_rate", value0: Optional[float] = None,
                   rate: Optional[float] = None, coefficients: Optional[Sequence[float]] = None,
                   amplitude: Optional[float] = None, frequency: Optional[float] = None,
                   phase: Optional[float] = None) -> int: ...
    def add_spring(self, name: str, body_a: BodyRef, body_b: BodyRef, point_a: ArrayLike = ...,
                   point_b: ArrayLike = ..., stiffness: float = 0.0, damping: float = 0.0,
                   rest_length: float = 0.0) -> int: ...
    def add_torsional_spring(self, name: str, joint: Union[str, int], stiffness: float = 0.0,
                             damping: float = 0.0, angle0: float = 0.0) -> int: ...
    def add_load(self, name: str, body: BodyRef, force: ArrayLike = ..., point: ArrayLike = ...,
                 torque: ArrayLike = ..., scale: Optional[Dict[str, Any]] = None) -> int: ...
    def add_prismatic_friction(self, name: str, joint: Union[str, int], mu: float) -> int: ...
    def add_shape(self, name: str, type: str, body: BodyRef = "ground", position: ArrayLike = ...,
                  quaternion: ArrayLike = ..., radius: Optional[float] = None,
                  length: Optional[float] = None, half_size: Optional[ArrayLike] = None,
                  radii: Optional[ArrayLike] = None, normal: Optional[ArrayLike] = None,
                  offset: Optional[float] = None, file: Optional[str] = None,
                  per_triangle: bool = False, group: Optional[int] = None,
                  mask: Optional[int] = None) -> int: ...
    def set_contact_default(self, default: str) -> None: ...
    def exclude_contact(self, shape_a: Union[str, int], shape_b: Union[str, int]) -> None: ...
    def add_contact_pair(self, shape_a: Union[str, int], shape_b: Union[str, int],
                         restitution: Optional[float] = None,
                         friction: Optional[float] = None,
                         rolling_friction: Optional[float] = None,
                         spinning_friction: Optional[float] = None) -> None: ...
    def set_friction(self, friction: float) -> None: ...
    def set_resistance(self, rolling_friction: float = 0.0,
                       spinning_friction: float = 0.0) -> None: ...
    @property
    def contact_pairs(self) -> List[str]: ...
    def set_gravity(self, g: ArrayLike) -> None: ...
    @property
    def warnings(self) -> List[str]: ...
    def build(self) -> Model: ...

class RunResult:
    @property
    def ok(self) -> bool: ...
    @property
    def status(self) -> str: ...
    message: str
    t: float

class Trajectory:
    @property
    def t(self) -> Vector: ...
    @property
    def q(self) -> npt.NDArray[np.float64]: ...
    @property
    def v(self) -> npt.NDArray[np.float64]: ...
    events: List[Event]

class JointReaction:
    joint: str
    body: str
    force: Vector
    torque: Vector
    def __iter__(self) -> Any: ...

class ContactForce:
    name: str
    row: int
    mode: str
    normal: float
    @property
    def tangential(self) -> Vector: ...
    @property
    def slip_direction(self) -> Vector: ...
    body: int
    point: Vector
    normal_force: Vector
    tangential_force: Vector

class Snapshot:
    t: float

class Simulation:
    def __init__(self, model: Model, options: Optional[Options] = ...) -> None: ...
    def advance_to(self, t_end: float) -> RunResult: ...
    def step(self, dt: float) -> RunResult: ...
    def run(self, t_end: float) -> Tuple[Trajectory, RunResult]: ...
    def events(self, t_end: float) -> List[Event]: ...
    def request_stop(self) -> None: ...
    max_output_rows: float
    @property
    def t(self) -> float: ...
    q: Vector
    v: Vector
    @property
    def options(self) -> Options: ...
    @property
    def stats(self) -> Dict[str, Any]: ...
    @property
    def active_rows(self) -> List[int]: ...
    external_force: Vector
    def set_state(self, t: float, q: ArrayLike, v: ArrayLike) -> None: ...
    def multipliers(self) -> Vector: ...
    def joint_reactions(self) -> Dict[str, JointReaction]: ...
    def driver_efforts(self) -> Dict[str, float]: ...
    def contact_forces(self) -> Dict[str, ContactForce]: ...
    def index_sets(self) -> Tuple[List[int], List[int]]: ...
    def set_external_force(self, f: ArrayLike) -> None: ...
    def set_force(self, f: Optional[Callable[[float, Vector, Vector], ArrayLike]]) -> None: ...
    def on_step(self, f: Callable[[float, Vector, Vector], Any]) -> int: ...
    def on_event(self, f: Callable[[Event, Vector, Vector, Vector], Any]) -> int: ...
    def remove_observer(self, id: int) -> None: ...
    def save(self) -> Snapshot: ...
    def restore(self, snapshot: Snapshot) -> None: ...

def compare(model: Model, integrators: Sequence[str], t_end: float,
            options: Optional[Options] = None) -> List[Dict[str, Any]]: ...
def integrators() -> List[str]: ...
