import sys

from torch_wanops.cli import main

sys.exit(main())
