"""``python -m swemine``: the command line."""
import sys

from swemine.pipelines.cli import main

sys.exit(main())
