"""Every rule, in code order. A new rule is one module here plus its entry in ``ALL_RULES``."""

from __future__ import annotations

from tflint_leaks.rules.base import Invalid, Rule
from tflint_leaks.rules.tfl101_python_scalar_argument import PythonScalarArgument
from tflint_leaks.rules.tfl102_python_object_argument import PythonObjectArgument
from tflint_leaks.rules.tfl103_function_recreated import FunctionRecreated
from tflint_leaks.rules.tfl104_function_method_per_instance import FunctionMethodPerInstance
from tflint_leaks.rules.tfl105_varying_shape_argument import VaryingShapeArgument
from tflint_leaks.rules.tfl201_persistent_tape_not_released import PersistentTapeNotReleased
from tflint_leaks.rules.tfl202_gradient_inside_persistent_tape import GradientInsidePersistentTape
from tflint_leaks.rules.tfl203_tape_spans_loop import TapeSpansLoop
from tflint_leaks.rules.tfl204_tape_kept_across_iterations import TapeKeptAcrossIterations
from tflint_leaks.rules.tfl301_python_container_mutation import PythonContainerMutation
from tflint_leaks.rules.tfl302_variable_created_per_call import VariableCreatedPerCall
from tflint_leaks.rules.tfl303_python_side_effect import PythonSideEffect
from tflint_leaks.rules.tfl304_print_in_function import PrintInFunction
from tflint_leaks.rules.tfl401_model_built_in_loop import ModelBuiltInLoop
from tflint_leaks.rules.tfl402_predict_in_loop import PredictInLoop
from tflint_leaks.rules.tfl403_fit_in_loop import FitInLoop
from tflint_leaks.rules.tfl404_dataset_rebuilt_in_loop import DatasetRebuiltInLoop

ALL_RULES: tuple[type[Rule], ...] = (
    PythonScalarArgument,
    PythonObjectArgument,
    FunctionRecreated,
    FunctionMethodPerInstance,
    VaryingShapeArgument,
    PersistentTapeNotReleased,
    GradientInsidePersistentTape,
    TapeSpansLoop,
    TapeKeptAcrossIterations,
    PythonContainerMutation,
    VariableCreatedPerCall,
    PythonSideEffect,
    PrintInFunction,
    ModelBuiltInLoop,
    PredictInLoop,
    FitInLoop,
    DatasetRebuiltInLoop,
)

RULES_BY_CODE: dict[str, type[Rule]] = {rule.code: rule for rule in ALL_RULES}

__all__ = ["ALL_RULES", "RULES_BY_CODE", "Invalid", "Rule"]
