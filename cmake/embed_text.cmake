# Writes a text file as a C array of chars ending in NUL, for a program that prints it:
#   cmake -DIN=web/view.js -DOUT=view_js.c -DNAME=kiln__view_js -P cmake/embed_text.cmake
# The text goes into an HTML <script> element, so it must not contain "</script".
file(READ "${IN}" _text)
string(TOLOWER "${_text}" _lower)
string(FIND "${_lower}" "</script" _at)
if(NOT _at EQUAL -1)
  message(FATAL_ERROR "${IN} contains \"</script\", which would end the page's <script> element")
endif()
file(READ "${IN}" _hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," _bytes "${_hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" _bytes "${_bytes}")
file(WRITE "${OUT}.tmp" "/* Generated from ${IN} by cmake/embed_text.cmake. */\nconst char ${NAME}[] = {\n${_bytes}0x00};\n")
file(RENAME "${OUT}.tmp" "${OUT}")
