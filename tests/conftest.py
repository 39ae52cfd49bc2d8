import os
import sys

import warp as wp

sys.path.insert(0, os.path.dirname(__file__))
wp.config.quiet = True
