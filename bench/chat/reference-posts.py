# In-process posting through the reference implementation's own code: imports chat.py (unmodified)
# from <reference dir> and calls cmd_post <count> times in one process, as caesar's benchmark calls
# postMessage. Prints {"seconds": …} for the loop alone (interpreter start excluded, as for caesar).
# Usage: python3 reference-posts.py <reference dir> <root> <channel> <count>
import contextlib
import io
import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

reference, root, channel, count = sys.argv[1], Path(sys.argv[2]), sys.argv[3], int(sys.argv[4])
sys.path.insert(0, reference)
import chat  # noqa: E402

with contextlib.redirect_stdout(io.StringIO()):
    started = time.perf_counter()
    for index in range(1, count + 1):
        chat.cmd_post(
            root,
            SimpleNamespace(channel=channel, sender="bench", to=None, title=f"post {index}", reply=None,
                            status="discussion", body=f"body of post {index}\n", body_file=None),
        )
    seconds = time.perf_counter() - started
print(json.dumps({"seconds": seconds}))
