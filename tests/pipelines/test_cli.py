"""The command line: plain help text for every command and job, commands parsed only when named."""
from __future__ import annotations

import re

import pytest

from swemine.pipelines.cli.main import COMMANDS, _chosen, build_parser
from swemine.pipelines.configs import JOBS

MARKUP = re.compile(r"``|:(func|mod|class|data|meth):`")


def _help(argv: list[str], capsys) -> str:
    with pytest.raises(SystemExit):
        build_parser(argv).parse_args(argv)
    return capsys.readouterr().out


@pytest.mark.parametrize("argv", [["--help"], ["run", "--help"], *[["run", j, "--help"] for j in JOBS],
                                  *[[c, "--help"] for c in COMMANDS], ["launch", "midtrain", "--help"]])
def test_help_is_plain_text(argv, capsys):
    text = _help(argv, capsys)
    assert text.startswith("usage: swemine") and not MARKUP.search(text), argv


def test_help_lists_jobs_in_pipeline_order(capsys):
    text = _help(["run", "--help"], capsys)
    positions = [text.index(f"    {j} ") for j in JOBS]
    assert positions == sorted(positions) and list(JOBS)[:3] == ["trajectories", "localization", "tasks"]


def test_only_the_named_command_gets_its_arguments():
    assert _chosen(["-v", "run", "--output", "o", "fim", "--format", "psm"]) == ("run", "fim")
    assert _chosen(["inspect", "out/fim"]) == ("inspect", None)
    assert _chosen([]) == (None, None)
    args = build_parser(["run", "fim"]).parse_args(["run", "fim", "--format", "psm"])
    assert args.fim_format == "psm"
    with pytest.raises(SystemExit):     # the fim flags are not given to the errors job
        build_parser(["run", "errors"]).parse_args(["run", "errors", "--format", "psm"])


def test_a_mistyped_flag_is_an_error_not_a_beam_option(capsys):
    from swemine.pipelines.cli.main import main

    assert main(["run", "trajectories", "--inptu", "x"]) == 2
    assert "unrecognized arguments: --inptu" in capsys.readouterr().err
    # a real Beam option passes the check (the run then stops on the missing --input, not on the option)
    assert main(["run", "trajectories", "--direct_num_workers=1"]) == 2
    err = capsys.readouterr().err
    assert "needs --input" in err and "unrecognized" not in err


def test_output_and_force_before_or_after_the_job_name():
    from swemine.pipelines.cli.main import build_parser

    for argv in (["run", "--output", "o", "--force", "trajectories"], ["run", "trajectories", "--output", "o", "--force"]):
        args, _ = build_parser(argv).parse_known_args(argv)
        assert (args.output, args.force) == ("o", True), argv


@pytest.mark.parametrize("verbose", [False, True])
def test_library_traces_only_with_verbose(capsys, verbose):
    import logging

    from swemine.pipelines.cli.main import setup_logging

    setup_logging(verbose)
    try:
        raise ConnectionError("host did not answer")
    except ConnectionError:
        logging.getLogger("gcsfs").error("_request out of retries", exc_info=True)
        logging.getLogger("swemine").error("our own", exc_info=True)
    err = capsys.readouterr().err
    library = err[:err.index("swemine ERROR our own")]
    assert "gcsfs ERROR _request out of retries" in library
    assert ("Traceback" in library) is verbose
    assert "Traceback" in err[err.index("swemine ERROR our own"):]      # swemine's own traces always stay
    setup_logging(False)


def test_libraries_with_a_handler_of_their_own_do_not_also_reach_ours():
    import logging

    import huggingface_hub  # noqa: F401 - installs its own stderr handler

    from swemine.pipelines.cli.main import setup_logging

    setup_logging(False)
    assert logging.getLogger("huggingface_hub").handlers and not logging.getLogger("huggingface_hub").propagate
    assert not logging.getLogger("datasets").propagate and logging.getLogger("gcsfs").propagate
