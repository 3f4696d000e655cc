"""nonatomic: find non-atomic tool-call hazards in LLM agent code and gateway logs."""

__version__ = "0.1.0"
