# CPU time (user + system) and wall time of child processes, for bench/chat: runs each command of a
# JSON list <rounds> times, interleaved, stdout and stderr piped (as an agent's shell tool captures
# them), and prints a JSON list of {"cpu": [ms...], "wall": [ms...]}. Node cannot read a reaped child's
# rusage; Python can (RUSAGE_CHILDREN).
import json
import resource
import subprocess
import sys
import time

commands = json.loads(sys.argv[1])
rounds = int(sys.argv[2])
results = [{"cpu": [], "wall": []} for _ in commands]
for _ in range(rounds):
    for index, command in enumerate(commands):
        before = resource.getrusage(resource.RUSAGE_CHILDREN)
        started = time.perf_counter()
        done = subprocess.run(command["argv"], env=command.get("env"), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        wall = time.perf_counter() - started
        after = resource.getrusage(resource.RUSAGE_CHILDREN)
        if done.returncode != 0:
            sys.exit(f"{' '.join(command['argv'])} exited {done.returncode}: {done.stderr.decode()[-500:]}")
        cpu = after.ru_utime - before.ru_utime + after.ru_stime - before.ru_stime
        results[index]["cpu"].append(cpu * 1000)
        results[index]["wall"].append(wall * 1000)
print(json.dumps(results))
