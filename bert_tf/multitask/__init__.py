"""Multi-task fine-tuning (MT-DNN): a shared encoder, a head per task, each step one task's batch.

`run_multitask.py` runs it; `task_list` parses its `--tasks` and samples the tasks, `runner`
trains, evaluates and exports.
"""
