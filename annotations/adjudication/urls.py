from django.urls import path

from annotations.adjudication import views

app_name = "adjudication"
urlpatterns = [
    path("<slug:slug>/", views.adjudication_queue, name="queue"),
    path("<slug:slug>/items/<int:item_pk>/", views.adjudication_item, name="item"),
]
