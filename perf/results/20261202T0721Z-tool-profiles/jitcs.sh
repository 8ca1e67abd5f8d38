# jit_cs pid -> centiseconds of CPU in the JVM's JIT compiler threads
jit_cs() { local s=0 t; for t in /proc/$1/task/*; do case "$(cat $t/comm 2>/dev/null)" in C1\ Compi*|C2\ Compi*) s=$((s + $(awk '{print $14+$15}' $t/stat)));; esac; done; echo $s; }
