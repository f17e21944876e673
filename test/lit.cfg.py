# -*- Python -*-
# lit configuration of cpnumeric's FileCheck tests.
import os

import lit.formats
from lit.llvm import llvm_config

config.name = "CPN"
config.test_format = lit.formats.ShTest(not llvm_config.use_lit_shell)
config.suffixes = [".mlir"]
config.test_source_root = os.path.dirname(__file__)
config.test_exec_root = os.path.join(config.cpn_obj_root, "test")
config.excludes = ["CMakeLists.txt", "lit.cfg.py", "lit.site.cfg.py", "python", "runtime"]

llvm_config.with_system_environment(["HOME", "INCLUDE", "LIB", "TMP", "TEMP"])
llvm_config.use_default_substitutions()
tool_dirs = [config.cpn_tools_dir, config.llvm_tools_dir]
llvm_config.add_tool_substitutions(["cpn-opt", "FileCheck", "not"], tool_dirs)
