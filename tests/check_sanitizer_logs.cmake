# Fails, printing them, when a sanitizer wrote reports into LOGS
# (tests/sanitize.cmake).
file(GLOB _logs ${LOGS}/*)
if(_logs)
  foreach(_log ${_logs})
    file(READ ${_log} _text)
    message("==== ${_log}\n${_text}")
  endforeach()
  list(LENGTH _logs _n)
  message(FATAL_ERROR "${_n} sanitizer report(s) in ${LOGS}")
endif()
message("no sanitizer reports")
