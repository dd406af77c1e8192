# cmake -DINPUT=model.onnx -DOUTPUT=embedded_model.cpp -P embed_model.cmake: the model's bytes as an
# array behind viewer::embedded_model().
file(READ ${INPUT} hex HEX)
string(REGEX REPLACE "([0-9a-f][0-9a-f])" "0x\\1," bytes "${hex}")
string(REGEX REPLACE "(0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,0x..,)" "\\1\n" bytes "${bytes}")
file(WRITE ${OUTPUT} "// Generated from models/cartoon.onnx by embed_model.cmake.\n#include <vector>\n\nnamespace viewer {\n\n"
                     "const std::vector<unsigned char>& embedded_model() {\n  static const std::vector<unsigned char> bytes = {\n"
                     "${bytes}};\n  return bytes;\n}\n\n}  // namespace viewer\n")
