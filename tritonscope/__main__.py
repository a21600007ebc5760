from tritonscope.cli import main

main()
