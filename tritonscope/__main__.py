from tritonscope.launch import main

main()
