from tokkit._encode import Encoder
from tokkit.formats import Spec

def build_kernel(spec: Spec, split_special_tokens: bool = False) -> Encoder: ...
