# Writes OUT (a header defining QGEN_SOURCE_HASH) from the SHA-256 of the
# sources a JIT-compiled object depends on: the generator, its templates
# and ISA rows, and the headers whose layouts the kernels read. The JIT's
# disk cache keys objects by it, so a changed generator never links an
# object built by an older one. The header is rewritten only when the hash
# changes. Run with cmake -DSOURCE_DIR=... -DOUT=... -P this file.
file(GLOB_RECURSE files RELATIVE ${SOURCE_DIR}
     ${SOURCE_DIR}/generator/*.c ${SOURCE_DIR}/generator/*.h ${SOURCE_DIR}/templates/*.def
     ${SOURCE_DIR}/templates/*.c ${SOURCE_DIR}/templates/*.h
     ${SOURCE_DIR}/targets/*.json ${SOURCE_DIR}/include/qgen/*.h)
list(SORT files)
set(material "")
foreach(f ${files})
  file(SHA256 ${SOURCE_DIR}/${f} h)
  string(APPEND material "${f} ${h}\n")
endforeach()
string(SHA256 hash "${material}")
set(text "#define QGEN_SOURCE_HASH \"${hash}\"\n")
if(EXISTS ${OUT})
  file(READ ${OUT} old)
endif()
if(NOT "${old}" STREQUAL "${text}")
  file(WRITE ${OUT} "${text}")
endif()
