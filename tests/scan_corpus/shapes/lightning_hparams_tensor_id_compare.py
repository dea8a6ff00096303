# src/lightning/pytorch/loggers/utilities.py
from torch import Tensor


def _log_hyperparams(trainer) -> None:
    pl_module = trainer.lightning_module
    hparams_initial = None
    if pl_module._log_hyperparams and trainer.datamodule._log_hyperparams:
        datamodule_hparams = trainer.datamodule.hparams_initial
        lightning_hparams = pl_module.hparams_initial
        inconsistent_keys = []
        for key in lightning_hparams.keys() & datamodule_hparams.keys():
            lm_val, dm_val = lightning_hparams[key], datamodule_hparams[key]
            if (
                type(lm_val) != type(dm_val)  # noqa: E721
                or (isinstance(lm_val, Tensor) and id(lm_val) != id(dm_val))  # corpus: sink
                or lm_val != dm_val
            ):
                inconsistent_keys.append(key)
        if inconsistent_keys:
            raise RuntimeError(f"inconsistent hparams {inconsistent_keys}")
        hparams_initial = {**lightning_hparams, **datamodule_hparams}
    for logger in trainer.loggers:
        if hparams_initial is not None:
            logger.log_hyperparams(hparams_initial)
